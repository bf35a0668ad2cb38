"""`torch.backends.cudnn`: settable flags with no effect (there is no cuDNN here)."""

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    return False
