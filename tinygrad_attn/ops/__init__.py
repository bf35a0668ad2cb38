"""Primitive ops: one `Function` subclass per op, a file per family.

Each op's `forward` takes and returns ndarrays and saves what its `backward` needs; `backward`
returns one gradient per input (None where none flows) in the output's (broadcast) shape. No op
un-broadcasts, accumulates or touches `.grad`: the engine does, in one place.
"""
