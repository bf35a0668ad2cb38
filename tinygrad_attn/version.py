"""`torch.version`: this package's version; `cuda` and `hip` are None, as in a PyTorch built
for the CPU only (scripts test `torch.version.cuda` to pick a device)."""

__version__ = "0.1.0"
cuda = None
hip = None
debug = False
git_version = "unknown"
