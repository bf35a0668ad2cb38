"""The cases that check "one meaning per name" against PyTorch: every public name that NumPy and
PyTorch both have (and this package exports) is called the PyTorch way, and the result must be
PyTorch's: values, dtype, shape, (values, indices) pairs, gradients, and the error class where
PyTorch raises.

Each case is a snippet of code that binds `out`, run with `torch` being either PyTorch or
tinygrad_attn (and `np` NumPy). `tests/make_one_meaning_reference.py` runs them under PyTorch
and writes what it got to `tests/data/one_meaning_reference.json`; `test_one_meaning.py`
runs them here against that file (no PyTorch needed), and `test_one_meaning_vs_torch.py`
against PyTorch itself when it is installed.

`NAMES` maps each shared public name to the cases that exercise it; the test walks the names
the three libraries share and fails for one without a case.
"""

from __future__ import annotations

# id -> code. `x` is a (2, 3) float32 tensor, `xi` an int64 one, `xd` a float64 one with
# requires_grad, `b` a bool one; `out` is what is compared.
SETUP = """
x = torch.tensor([[1.0, -2.0, 4.0], [3.0, 5.0, -9.0]])
xi = torch.tensor([[3, 1, 2], [0, 7, 5]])
xd = torch.tensor([[1.0, -2.0, 4.0], [3.0, 5.5, -9.0]], dtype=torch.float64, requires_grad=True)
b = torch.tensor([[True, False, True], [False, False, True]])
"""

CASES: dict[str, str] = {
    # ---------------------------------------------------------------- reductions
    "sum": "out = x.sum()",
    "sum_dim": "out = x.sum(1)",
    "sum_dim_keepdim": "out = x.sum(dim=0, keepdim=True)",
    "sum_dims": "out = x.sum((0, 1))",
    "sum_int": "out = xi.sum(1)",
    "sum_bool": "out = b.sum()",
    "sum_dtype": "out = xi.sum(dtype=torch.float64)",
    "torch_sum": "out = torch.sum(x, dim=1)",
    "mean": "out = x.mean()",
    "mean_dim": "out = x.mean(-1, keepdim=True)",
    "mean_int": "out = xi.mean()",
    "mean_int_dtype": "out = xi.mean(dtype=torch.float32)",
    "torch_mean": "out = torch.mean(x, 0)",
    "std": "out = x.std()",
    "std_dim_positional": "out = x.std(-1)",
    "std_dim_keepdim": "out = x.std(-1, keepdim=True)",
    "std_dim_kw": "out = x.std(dim=-1)",
    "std_correction0": "out = x.std(1, correction=0)",
    "std_unbiased_false": "out = x.std(1, unbiased=False)",
    "std_unbiased_positional": "out = x.std(1, False)",
    "std_grad": "y = xd.std(-1); y.sum().backward(); out = xd.grad",
    "std_int": "out = xi.std()",
    "torch_std": "out = torch.std(x, 1)",
    "var": "out = x.var()",
    "var_dim": "out = x.var(0)",
    "var_dim_keepdim": "out = x.var(-1, keepdim=True)",
    "var_grad": "y = xd.var(0); y.sum().backward(); out = xd.grad",
    "torch_var": "out = torch.var(x, dim=-1, correction=0)",
    "var_large_offset_float32": (
        "z = torch.tensor([1e4 + 0.1, 1e4 + 0.2, 1e4 + 0.3, 1e4 + 0.4]); out = z.var()"
    ),
    "prod": "out = x.prod()",
    "prod_dim": "out = x.prod(1)",
    "prod_int": "out = xi.prod(0)",
    "torch_prod": "out = torch.prod(x, 1, keepdim=True)",
    "prod_empty": "out = torch.ones(2, 0).prod(1)",
    "max": "out = x.max()",
    "max_dim": "out = x.max(1)",
    "max_dim_keepdim": "out = x.max(dim=0, keepdim=True)",
    "max_other": "out = x.max(torch.zeros(2, 3))",
    "max_dim_grad": "y = xd.max(1).values; y.sum().backward(); out = xd.grad",
    "max_ties_grad": (
        "z = torch.tensor([[1.0, 3.0, 3.0]], requires_grad=True); z.max().backward(); out = z.grad"
    ),
    "max_ties_dim_grad": (
        "z = torch.tensor([[1.0, 3.0, 3.0]], requires_grad=True); "
        "z.max(1).values.sum().backward(); out = z.grad"
    ),
    "max_nan": "out = torch.tensor([[1.0, float('nan'), 3.0]]).max(1)",
    "max_0d_dim": "out = torch.tensor(5.0).max(dim=0)",
    "max_dim_out_of_range": "out = x.max(2)",
    "max_empty": "out = torch.zeros(0, 3).max()",
    "max_empty_dim": "out = torch.zeros(0, 3).max(1)",
    "torch_max": "out = torch.max(x, 1)",
    "torch_max_other": "out = torch.max(x, torch.ones(2, 3))",
    "min": "out = x.min()",
    "min_dim": "out = x.min(0)",
    "torch_min": "out = torch.min(x)",
    "amax": "out = x.amax(1)",
    "amax_dims": "out = torch.amax(x, (0, 1))",
    "amin": "out = x.amin(0, keepdim=True)",
    "torch_amin": "out = torch.amin(x, dim=-1)",
    "argmax": "out = x.argmax()",
    "argmax_dim": "out = x.argmax(1)",
    "argmax_keepdim": "out = x.argmax(dim=0, keepdim=True)",
    "torch_argmax": "out = torch.argmax(x, dim=1)",
    "argmin": "out = x.argmin(dim=1)",
    "torch_argmin": "out = torch.argmin(x)",
    "all": "out = b.all()",
    "all_dim": "out = b.all(1)",
    "any": "out = b.any(dim=0)",
    "any_float": "out = x.any()",
    "cumsum": "out = x.cumsum(1)",
    "cumsum_int": "out = xi.cumsum(0)",
    "torch_cumsum": "out = torch.cumsum(x, dim=0)",
    "logsumexp": "out = x.logsumexp(1)",
    "logsumexp_empty": "out = torch.logsumexp(torch.ones(2, 0), 1)",
    "norm": "out = x.norm()",
    "norm_dim": "out = x.norm(dim=1)",
    # ------------------------------------------------------------- sorting and picking
    "sort": "out = x.sort()",
    "sort_descending": "out = x.sort(dim=1, descending=True)",
    "sort_dim0": "out = x.sort(0)",
    "sort_uint8_descending": (
        "out = torch.tensor([3, 1, 200], dtype=torch.uint8).sort(descending=True)"
    ),
    "sort_nan": "out = torch.tensor([3.0, float('nan'), 1.0]).sort()",
    "sort_nan_descending": "out = torch.tensor([3.0, float('nan'), 1.0]).sort(descending=True)",
    "sort_bool": "out = torch.tensor([True, False, True]).sort()",
    "sort_0d": "out = torch.tensor(5.0).sort()",
    "sort_grad": "y = xd.sort(1).values; (y * torch.arange(3)).sum().backward(); out = xd.grad",
    "torch_sort": "out = torch.sort(x, dim=0, descending=True)",
    "argsort": "out = x.argsort()",
    "argsort_descending": "out = x.argsort(dim=1, descending=True)",
    "torch_argsort": "out = torch.argsort(x, dim=0)",
    "topk": "out = x.topk(2)",
    "topk_smallest": "out = x.topk(2, dim=1, largest=False)",
    "topk_nan": "out = torch.tensor([3.0, float('nan'), 1.0]).topk(2)",
    "topk_0d": "out = torch.tensor(5.0).topk(1)",
    "topk_too_many": "out = x.topk(4)",
    "gather": "out = x.gather(1, torch.tensor([[2, 0], [1, 1]]))",
    "gather_dim_out_of_range": "out = x.gather(5, torch.tensor([[0]]))",
    "gather_fewer_dims": "out = x.gather(1, torch.tensor([0, 1]))",
    "nonzero": "out = x.nonzero()",
    "nonzero_tuple": "out = torch.tensor([0.0, 1.0, 2.0]).nonzero(as_tuple=True)",
    "where": "out = torch.where(b, x, torch.zeros(2, 3))",
    "where_scalars": "out = torch.where(b, 1.0, 0.0)",
    "where_int_float": "out = torch.where(b, xi, 0.5)",
    "where_method": "out = x.where(b, -1.0)",
    "diagonal": "out = torch.arange(9.0).reshape(3, 3).diagonal()",
    "diagonal_offset": "out = torch.arange(12.0).reshape(3, 4).diagonal(1)",
    # --------------------------------------------------------------- elementwise
    "abs": "out = x.abs()",
    "torch_abs": "out = torch.abs(xi)",
    "exp": "out = torch.exp(x)",
    "exp_int": "out = torch.exp(xi)",
    "log": "out = torch.log(torch.tensor([0.0, 1.0, 2.0]))",
    "log_negative": "out = torch.log(torch.tensor([-1.0]))",
    "sqrt": "out = torch.sqrt(torch.tensor([4.0, -1.0]))",
    "sqrt_int": "out = torch.sqrt(xi)",
    "sin": "out = torch.sin(x)",
    "cos": "out = torch.cos(xi)",
    "tanh": "out = torch.tanh(x)",
    "square": "out = torch.square(xi)",
    "sign": "out = torch.sign(x)",
    "sign_grad": "(xd.sign() * xd.sign()).mean().backward(); out = xd.grad",
    "pow": "out = torch.pow(x, 2)",
    "pow_int_float": "out = torch.pow(xi, 0.5)",
    "pow_tensor": "out = x.pow(torch.tensor([1.0, 2.0, 3.0]))",
    "round": "out = torch.tensor([0.5, 1.5, 2.5, -0.5, 1.234]).round()",
    "round_decimals": "out = torch.tensor([1.2345, -2.5678]).round(decimals=2)",
    "clip": "out = x.clip(-1.0, 2.0)",
    "clip_tensor_bounds": "out = x.clip(torch.zeros(3), torch.tensor([1.0, 2.0, 3.0]))",
    "clip_min_above_max": "out = x.clip(3.0, 2.0)",
    "maximum": "out = torch.maximum(x, torch.zeros(3))",
    "maximum_ties_grad": (
        "z = torch.tensor([1.0, 2.0], requires_grad=True); "
        "torch.maximum(z, torch.tensor([1.0, 0.0])).sum().backward(); out = z.grad"
    ),
    "minimum": "out = torch.minimum(xi, torch.tensor(2))",
    "isnan": "out = torch.isnan(torch.tensor([1.0, float('nan')]))",
    "isinf": "out = torch.isinf(torch.tensor([1.0, float('inf')]))",
    "isfinite": "out = torch.isfinite(torch.tensor([float('-inf'), 0.0]))",
    "allclose": "out = torch.allclose(x, x + 1e-9)",
    "equal": "out = torch.equal(x, x.clone())",
    "equal_shapes": "out = torch.equal(x, x[0])",
    # ------------------------------------------------------------ type promotion
    "int_times_float": "out = torch.arange(3) * 0.5",
    "int_div_float": "out = torch.arange(3) / 2.0",
    "int_div_int": "out = torch.arange(3) / 2",
    "int_floordiv": "out = torch.arange(5) // 2",
    "int_mod": "out = torch.tensor([-7, 7]) % 3",
    "float_floordiv": "out = torch.tensor([-2.5, 2.5]) // 2",
    "int64_times_float32": "out = xi * x",
    "float32_plus_0d_float64": "out = x + torch.tensor(1.0, dtype=torch.float64)",
    "int32_plus_0d_int64": "out = xi.int() + torch.tensor(1)",
    "uint8_plus_300": "out = torch.tensor([1, 2], dtype=torch.uint8) + 300",
    "bool_plus_int": "out = b + 1",
    "bool_and": "out = b & torch.tensor([[True, True, False], [True, False, False]])",
    "bool_or_not": "out = ~b | b",
    "int_xor": "out = xi ^ 1",
    "float_and": "out = x & x",
    "float16_times_int": "out = torch.ones(2, dtype=torch.float16) * torch.tensor([2, 3])",
    "matmul": "out = torch.matmul(x, x.T)",
    "matmul_vec": "out = x @ torch.tensor([1.0, 0.0, 1.0])",
    "eq_method": "out = x.eq(1.0)",
    # -------------------------------------------------------------- shapes and views
    "reshape": "out = torch.reshape(x, (3, 2))",
    "view": "out = x.view(3, 2)",
    "view_minus_one": "out = x.view(-1)",
    "view_after_transpose": "out = x.T.view(6)",
    "view_dtype": "out = torch.tensor([1.0]).view(torch.int32)",
    "flatten": "out = torch.ones(2, 3, 4).flatten(1)",
    "flatten_out_of_range": "out = x.flatten(0, 5)",
    "flatten_0d": "out = torch.tensor(3.0).flatten()",
    "ravel": "out = x.ravel()",
    "transpose": "out = torch.transpose(torch.ones(2, 3, 4), 0, 2).shape",
    "transpose_method": "out = x.transpose(0, 1)",
    "T": "out = x.T",
    "mT": "out = torch.ones(2, 3, 4).mT.shape",
    "swapaxes": "out = x.swapaxes(0, 1)",
    "squeeze": "out = torch.ones(3, 1, 2).squeeze().shape",
    "squeeze_dim_not_1": "out = torch.ones(3, 1).squeeze(0).shape",
    "squeeze_out_of_range": "out = torch.ones(3, 1).squeeze(3)",
    "torch_squeeze": "out = torch.squeeze(torch.ones(1, 2), 0)",
    "split": "out = torch.split(torch.arange(5.0), 2)",
    "split_sizes": "out = torch.arange(6.0).reshape(2, 3).split([1, 2], dim=1)",
    "split_bad_dim": "out = x.split(1, dim=4)",
    "chunk_bad_dim": "out = x.chunk(2, dim=3)",
    "unbind_bad_dim": "out = x.unbind(2)",
    "repeat": "out = torch.tensor([1.0, 2.0]).repeat(2, 2)",
    "moveaxis_out_of_range": "out = x.moveaxis(0, 5)",
    "flip": "out = torch.flip(x, [1])",
    "tril": "out = torch.tril(torch.ones(3, 3))",
    "tril_1d": "out = torch.tril(torch.ones(3))",
    "triu": "out = torch.triu(torch.ones(3, 4), 1)",
    "concatenate": "out = torch.concatenate([x, x], dim=0)",
    "stack": "out = torch.stack([x, x], dim=1)",
    "stack_promote": "out = torch.stack([torch.ones(2), torch.tensor([1, 2])])",
    "einsum": "out = torch.einsum('ij,kj->ik', x, x)",
    "outer": "out = torch.outer(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0, 5.0]))",
    "slice_write": "t = torch.tensor([1.0, 2.0, 3.0]); t[0:2].zero_(); out = t",
    "view_write": "t = torch.zeros(2, 3); t.view(6)[4] = 1.0; out = t",
    "transpose_write": "t = torch.zeros(2, 3); t.T[2, 0] = 5.0; out = t",
    "setitem_grad": ("y = xd * 2; y[0, 1] = 0.0; y.sum().backward(); out = xd.grad"),
    "view_inplace_grad": ("y = xd * 2; y[:, 0].mul_(3.0); y.sum().backward(); out = xd.grad"),
    "inplace_relu_grad": "y = xd * 1; y.relu_(); y.sum().backward(); out = xd.grad",
    "iadd_nonleaf_grad": ("y = xd * 2; y += xd; (y * y).sum().backward(); out = xd.grad"),
    "inplace_leaf_error": "xd.add_(1.0); out = xd",
    "modified_saved_error": "y = xd.exp(); y.add_(1.0); y.sum().backward(); out = xd.grad",
    # ------------------------------------------- views and in-place, as issue 24 lists them
    "iv_slice_zero": "t = torch.tensor([1.0, 2.0, 3.0]); t[0:2].zero_(); out = t",
    "iv_embedding_padding_row": (
        "emb = torch.nn.Embedding(3, 2)\n"
        "with torch.no_grad():\n    emb.weight[0].fill_(0)\n"
        "out = emb.weight[0]"
    ),
    "iv_init_zeros_row": (
        "w = torch.ones(2, 3, requires_grad=True); torch.nn.init.zeros_(w[0]); out = w"
    ),
    "iv_iadd_nonleaf_same_object": (
        "y = xd * 2; same = y; y += 1; out = [same is y, y.grad_fn is not None]"
    ),
    "iv_setitem_recorded": "y = xd * 2; y[0] = 0; y.sum().backward(); out = xd.grad",
    "iv_column_mul_": "y = xd * 2; y[:, 0].mul_(2); y.sum().backward(); out = xd.grad",
    "iv_relu_": "h = xd * 1.0; h.relu_(); (h * h).sum().backward(); out = xd.grad",
    "iv_residual_iadd": (
        "h = xd.tanh(); out_ = h * 2; out_ += xd; out_.sum().backward(); out = xd.grad"
    ),
    "iv_other_operand_saved_is_fine": (
        "w = torch.tensor([1.0, 2.0], requires_grad=True); y = w * 2\n"
        "with torch.no_grad():\n    w.add_(1)\n"
        "y.sum().backward(); out = w.grad"
    ),
    "iv_saved_operand_modified": (
        "w = torch.tensor([1.0, 2.0], requires_grad=True); y = w * w\n"
        "with torch.no_grad():\n    w.add_(1)\n"
        "y.sum().backward(); out = w.grad"
    ),
    "iv_exp_output_modified": "y = xd.exp(); y.mul_(2); y.sum().backward(); out = xd.grad",
    "iv_leaf_inplace_error": "w = torch.ones(2, requires_grad=True); w.mul_(2); out = w",
    "iv_view_of_leaf_error": "w = torch.ones(2, requires_grad=True); w[0].mul_(2); out = w",
    "iv_leaf_inplace_no_grad": (
        "w = torch.ones(2, requires_grad=True)\n"
        "with torch.no_grad():\n    w.mul_(2)\n"
        "out = [w, w.is_leaf, w.requires_grad]"
    ),
    "iv_expand_write_error": "e = torch.zeros(1, 3).expand(2, 3); e.add_(1); out = e",
    "iv_detach_shares": "d = xd.detach(); d[0, 0] = 100.0; out = xd",
    "iv_data_shares": "d = xd.data; d.zero_(); out = xd",
    "iv_view_sees_base_write": "t = torch.zeros(4); v = t[1:3]; t.fill_(2.0); out = v",
    "iv_base_sees_view_write": "t = torch.zeros(2, 2); t.T[0].fill_(1.0); out = t",
    "iv_live_view_rebased": (
        "y = xd * 2; a = y[0]; y[0, 1] = 5.0; a.sum().backward(); out = [a, xd.grad]"
    ),
    "iv_unbind_views": "t = torch.zeros(2, 3); r0, r1 = t.unbind(0); r1.fill_(1); out = t",
    "iv_split_views": "t = torch.zeros(6); a, b = t.split(3); b.add_(1); out = t",
    "iv_narrow_view": "t = torch.zeros(5); t.narrow(0, 1, 2).fill_(7); out = t",
    "iv_diagonal_view": "t = torch.zeros(3, 3); t.diagonal().fill_(1); out = t",
    "iv_unsqueeze_view": "t = torch.zeros(3); t.unsqueeze(0)[0, 1] = 4; out = t",
    "iv_reshape_copy_when_needed": (
        "t = torch.zeros(2, 3); r = t.T.reshape(6); r.fill_(1); out = t"
    ),
    "iv_version": "t = torch.zeros(3); t.add_(1); t[0] = 2; out = t._version",
    "iv_functional_relu_inplace": (
        "h = xd * 1.0; r = torch.nn.functional.relu(h, inplace=True); out = [r is h, h.tolist()]"
    ),
    "iv_module_relu_inplace": (
        "h = xd * 1.0; torch.nn.ReLU(inplace=True)(h); h.sum().backward(); out = xd.grad"
    ),
    "std_grad_at_zero_spread": (
        "w = torch.ones(3, dtype=torch.float64, requires_grad=True); w.std().backward(); "
        "out = w.grad"
    ),
    "var_sqrt_grad_at_zero_spread": (
        "w = torch.ones(3, dtype=torch.float64, requires_grad=True); "
        "w.var().sqrt().backward(); out = w.grad"
    ),
    "iv_version_shared_by_view": "t = torch.zeros(3); v = t[1:]; v.add_(1); out = t._version",
    "iv_masked_setitem_grad": ("y = xd * 3; y[y > 0] = 1.0; y.sum().backward(); out = xd.grad"),
    "iv_index_put_value_grad": (
        "v = torch.tensor([7.0, 8.0], requires_grad=True); t = torch.zeros(3, 2)\n"
        "t[1] = v; (t * t).sum().backward(); out = [t.grad_fn is not None, v.grad]"
    ),
    # ---------------------------------------------------------------- making tensors
    "arange": "out = torch.arange(5)",
    "arange_float": "out = torch.arange(0.0, 1.0, 0.25)",
    "zeros": "out = torch.zeros(2, 3)",
    "zeros_int": "out = torch.zeros(2, dtype=torch.int64)",
    "ones": "out = torch.ones((2,))",
    "zeros_like": "out = torch.zeros_like(xi)",
    "ones_like": "out = torch.ones_like(x, dtype=torch.float64)",
    "empty": "out = torch.empty(2, 3).shape",
    "empty_like": "out = torch.empty_like(xi).dtype",
    "full": "out = torch.full((2, 2), 7)",
    "full_float": "out = torch.full((2,), 1.5)",
    "full_like": "out = torch.full_like(x, 2)",
    "eye": "out = torch.eye(2, 3)",
    "linspace": "out = torch.linspace(0, 1, 5)",
    "tensor_int": "out = torch.tensor([1, 2])",
    "tensor_float": "out = torch.tensor([1.0, 2.0])",
    "tensor_float64_array": "out = torch.tensor(np.array([1.0, 2.0]))",
    "tensor_bool": "out = torch.tensor([True])",
    # ---------------------------------------------------------- conversions, facts
    "dtype_names": (
        "out = [str(d) for d in (torch.float16, torch.half, torch.float32, torch.float64, "
        "torch.double, torch.int8, torch.int16, torch.short, torch.int32, torch.int64, "
        "torch.long, torch.uint8, torch.bool)]"
    ),
    "uint_names": "out = [str(torch.uint16), str(torch.uint32), str(torch.uint64)]",
    "double": "out = x.double()",
    "half": "out = x.half().dtype",
    "long": "out = x.long()",
    "bool_method": "out = x.bool()",
    "type_name": "out = x.type()",
    "type_convert": "out = x.type(torch.int64)",
    "item": "out = x[0, 1].item()",
    "tolist": "out = xi.tolist()",
    "size": "out = tuple(x.size())",
    "size_dim": "out = x.size(1)",
    "shape": "out = tuple(x.shape)",
    "ndim": "out = x.ndim",
    "dim": "out = x.dim()",
    "numel": "out = x.numel()",
    "itemsize": "out = x.itemsize",
    "nbytes": "out = x.nbytes",
    "device": "out = str(x.device)",
    "data": "d = x.data; d[0, 0] = 9.0; out = x",
    "finfo_eps": "out = torch.finfo(torch.float32).eps",
    "finfo_max": "out = float(torch.finfo(torch.float16).max)",
    "iinfo_max": "out = int(torch.iinfo(torch.int32).max)",
    "len": "out = len(x)",
    "len_0d": "out = len(torch.tensor(1.0))",
    "bool_ambiguous": "out = bool(x)",
    "float_of_0d": "out = float(torch.tensor(2.5))",
    "int_of_0d": "out = int(torch.tensor(7))",
    "index_of_0d": "out = [10, 20, 30][torch.tensor(1)]",
    "format_0d": "out = f'{torch.tensor(2.34567):.2f}'",
    "neg": "out = -xi",
    "pos": "out = +x",
    "radd": "out = 1 + xi",
    "rsub": "out = 1.5 - xi",
    "rtruediv": "out = 1 / torch.tensor([2, 4])",
    "rpow": "out = 2 ** torch.tensor([1, 2])",
    "rfloordiv": "out = 7 // torch.tensor([2, 3])",
    "rmod": "out = 7 % torch.tensor([2, 3])",
    "rmatmul": "out = torch.tensor([1.0, 1.0]) @ x",
    "imul_int": "t = torch.tensor([1, 2]); t *= 3; out = t",
    "idiv_int": "t = torch.tensor([1, 2]); t /= 2; out = t",
    "ifloordiv": "t = torch.tensor([5, 7]); t //= 2; out = t",
    "imod": "t = torch.tensor([5, 7]); t %= 3; out = t",
    "ipow": "t = torch.tensor([2.0, 3.0]); t **= 2; out = t",
    "isub_leaf": "t = torch.tensor([2.0, 3.0]); t -= 1; out = t",
    "comparisons": "out = [x < 1, x <= 1, x > 1, x >= 1, x == 1, x != 1]",
    "getitem_bool": "out = x[x > 0]",
    "getitem_int_tensor": "out = x[torch.tensor([1, 0, 1])]",
    "abs_dunder": "out = abs(torch.tensor([-1.5]))",
    # ------------------------------------------- torch.* functions that are Tensor methods
    "torch_comparisons": (
        "out = [torch.eq(x, 1), torch.ne(xi, 1), torch.lt(x, 1), torch.le(x, 1), "
        "torch.gt(x, 1), torch.ge(x, 1)]"
    ),
    "eq_none_operators": "out = [x == None, x != None, x == [1.0, -2.0, 4.0], x != 'a']",
    "eq_method_none": "out = x.eq(None)",
    "torch_eq_list": "out = torch.eq(x, [1.0, -2.0, 4.0])",
    "torch_all": "out = [torch.all(b), torch.all(b, dim=1), torch.all(x > -10, 0, keepdim=True)]",
    "torch_any": "out = [torch.any(b), torch.any(b, dim=0), torch.any(x)]",
    "torch_bitwise_and": "out = torch.bitwise_and(xi, torch.tensor([1, 3, 2]))",
    "torch_broadcast_to": "out = torch.broadcast_to(torch.tensor([1.0, 2.0, 3.0]), (2, 3))",
    "torch_rounding": (
        "out = [torch.ceil(x / 3), torch.floor(x / 3), torch.trunc(x / 3), torch.frac(x / 3)]"
    ),
    "torch_round": (
        "out = [torch.round(x / 3, decimals=2), torch.round(torch.tensor([0.5, 1.5, 2.5, -0.5]))]"
    ),
    "torch_clip": "out = [torch.clip(x, -1, 2), torch.clamp_min(x, 0.5)]",
    "torch_count_nonzero": "out = [torch.count_nonzero(xi), torch.count_nonzero(xi, dim=0)]",
    "torch_diagonal": "out = [torch.diagonal(x), torch.diagonal(x, 1)]",
    "torch_expm1_log1p_grad": (
        "y = (torch.expm1(xd) + torch.log1p(xd.abs()) + torch.log2(xd.abs())).sum(); "
        "y.backward(); out = [y, xd.grad]"
    ),
    "torch_isclose": "out = torch.isclose(x, x + 1e-6)",
    "torch_logical": (
        "out = [torch.logical_and(b, x > 0), torch.logical_or(b, x > 0), "
        "torch.logical_xor(b, x > 0), torch.logical_not(b)]"
    ),
    "torch_nonzero": "out = [torch.nonzero(xi), torch.nonzero(b, as_tuple=True)]",
    "torch_reciprocal": "out = [torch.reciprocal(x), torch.reciprocal(xi)]",
    "torch_remainder": (
        "out = [torch.remainder(xi - 3, 4), torch.remainder(x, 3), torch.remainder(x, -3)]"
    ),
    "torch_neg_sgn": "out = [torch.neg(xi), torch.sgn(x)]",
    "torch_roll": "out = [torch.roll(x, 1), torch.roll(x, 1, 1), torch.roll(x, (1, -1), (0, 1))]",
    "torch_select_narrow": "out = [torch.select(x, 1, -1), torch.narrow(x, 1, 1, 2)]",
    "torch_swapaxes_movedim": "out = [torch.swapaxes(x, 0, 1), torch.movedim(x, 0, 1)]",
    "torch_unbind": "out = list(torch.unbind(x, 1))",
    "torch_index_select": "out = torch.index_select(x, 1, torch.tensor([2, 0]))",
    "torch_repeat_interleave": (
        "out = [torch.repeat_interleave(xi, 2), torch.repeat_interleave(x, 2, dim=0)]"
    ),
    "torch_scatter": "out = torch.scatter(torch.zeros(2, 3), 1, torch.tensor([[2], [0]]), 7.0)",
    "torch_masked_select": "out = torch.masked_select(x, b)",
    # ------------------------------- found by calling every shared method against PyTorch
    "clamp_int_float_bound": (
        "out = [xi.clamp(1.5), xi.clip(max=2.5), xi.clamp_min(0.5), b.clamp(0, 2), "
        "torch.clamp(xi, 0, 2)]"
    ),
    "clamp_inplace_int_float_bound": "t = xi.clone(); t.clamp_(1.5); out = t",
    "square_bool": "out = b.square()",
    "cumsum_0d": "out = torch.tensor(2.5).cumsum(0)",
    "any_all_0d_dim": "out = [torch.tensor(2.5).any(0), torch.tensor(0.0).all(-1)]",
    "nonzero_0d": "out = [torch.tensor(2.5).nonzero(), torch.tensor(0.0).nonzero()]",
    "movedim_0d": "out = torch.tensor(2.5).movedim(-1, 0)",
    "sign_bool": "out = [b.sign(), b.sgn()]",
    "squeeze_dims": (
        "z = x.reshape(1, 2, 3, 1); out = [z.squeeze(0, 3), z.squeeze((0, 3)), z.squeeze(0)]"
    ),
    "mm_1d": "out = torch.tensor([1.0, 2.0]).mm(torch.tensor([1.0, 2.0]))",
    "bmm_2d": "out = x.bmm(x.T)",
    "int_remainder_by_zero": "out = xi % 0",
    "tril_float_diagonal": "out = x.tril(1.5)",
    "roll_shifts_without_dims": "out = x.roll((1, 0))",
    "torch_sort_nan_descending": (
        "z = torch.tensor([1.0, float('nan'), 3.0]); "
        "out = [torch.sort(z, descending=True), torch.argsort(z, descending=True)]"
    ),
    "torch_where_condition_only": "out = list(torch.where(x > 0))",
    "hardtanh_int": "out = torch.nn.functional.hardtanh(xi)",
    "softmax_method_without_dim": "out = x.softmax()",
    "log_softmax_method_without_dim": "out = x.log_softmax()",
    "flip_without_dims": "out = x.flip()",
    "cumsum_without_dim": "out = x.cumsum()",
    "numpy_forms_through_numpy": (
        "out = [x.flip(0, 1), x.flatten().cumsum(0), x.softmax(-1), x.transpose(0, 1)]"
    ),
    # -------------------------------------- more activations and losses, with gradients
    "F_more_activations_grad": (
        "F = torch.nn.functional; "
        "y = [F.selu(xd), F.celu(xd, 0.7), F.celu(xd, -1.5), F.mish(xd), F.relu6(xd), "
        "F.hardsigmoid(xd), F.hardswish(xd), F.logsigmoid(xd), F.softsign(xd), "
        "F.tanhshrink(xd), F.threshold(xd, 0.5, -2.0), F.softmin(xd, 1), F.glu(xd, 0)]; "
        "sum(v.sum() * (i + 1) for i, v in enumerate(y)).backward(); out = [*y, xd.grad]"
    ),
    "F_hard_kinks_grad": (
        "F = torch.nn.functional; "
        "z = torch.tensor([-3.0, 3.0, 0.0, 6.0, -4.0, 4.0], dtype=torch.float64, "
        "requires_grad=True); "
        "y = [F.hardswish(z), F.hardsigmoid(z), F.relu6(z), F.threshold(z, 3.0, 1.0)]; "
        "sum(v.sum() * (i + 1) for i, v in enumerate(y)).backward(); out = [*y, z.grad]"
    ),
    "F_kl_div": (
        "F = torch.nn.functional; "
        "p = torch.tensor([[0.2, 0.0, 0.8], [0.5, 0.25, 0.25]], dtype=torch.float64); "
        "q = xd.log_softmax(1); "
        "ls = [F.kl_div(q, p, reduction=r) for r in ('batchmean', 'sum', 'none', 'mean')]; "
        "ls.append(F.kl_div(q, (p + 0.1).log(), reduction='sum', log_target=True)); "
        "sum(l.sum() for l in ls).backward(); out = [*ls, xd.grad]"
    ),
    "F_huber_pairwise": (
        "F = torch.nn.functional; t = torch.zeros(2, 3, dtype=torch.float64); "
        "w = torch.tensor([[1.0, 2.0, 3.0], [0.5, 0.0, 2.0]], dtype=torch.float64); "
        "ls = [F.huber_loss(xd, t), F.huber_loss(xd, t, delta=2.5, reduction='sum'), "
        "F.huber_loss(xd, t, weight=w), F.pairwise_distance(xd, t), "
        "F.pairwise_distance(xd, t, p=1.0, keepdim=True)]; "
        "sum(l.sum() for l in ls).backward(); out = [*ls, xd.grad]"
    ),
    "huber_weight_shape": "out = torch.nn.functional.huber_loss(x, x * 0, weight=x[0])",
    "nn_more_layers": (
        "nn = torch.nn; m = [nn.ReLU6(), nn.Hardsigmoid(inplace=True), nn.Hardswish(), "
        "nn.SELU(), nn.Mish(), nn.CELU(0.5), nn.LogSigmoid(), nn.Softsign(), nn.Tanhshrink(), "
        "nn.Threshold(0.1, 20.0), nn.GLU(), nn.Softmin(dim=1), nn.Unflatten(1, (3, 1)), "
        "nn.HuberLoss(delta=0.5), nn.KLDivLoss(reduction='batchmean'), nn.PairwiseDistance(), "
        "nn.CosineSimilarity()]; "
        "out = [repr(l) for l in m] + [m[12](x), m[13](x, x * 0), m[15](x, x * 0), m[16](x, x)]"
    ),
    "linalg_norms_grad": (
        "L = torch.linalg; ys = [L.vector_norm(xd), L.vector_norm(xd, 3, dim=1), "
        "L.vector_norm(xd, float('inf'), dim=0, keepdim=True), L.matrix_norm(xd), "
        "L.matrix_norm(xd, 1), L.matrix_norm(xd, -float('inf')), L.matrix_norm(xd, 1, "
        "keepdim=True), L.norm(xd), L.norm(xd, dim=1), L.norm(xd, 'fro'), L.norm(xd[0], 1)]; "
        "sum(y.sum() for y in ys).backward(); out = [*ys, xd.grad]"
    ),
    "linalg_norm_int": "out = torch.linalg.vector_norm(xi)",
    "torch_view_shares": (
        "v = torch.select(x, 0, 0); v[0] = 100.0; w = torch.diagonal(x); out = [x, w]"
    ),
}

# The shared names -> the cases that show their meaning (the walker checks it is complete).
NAMES: dict[str, tuple] = {
    # module-level names
    "all": ("torch_all",),
    "any": ("torch_any",),
    "bitwise_and": ("torch_bitwise_and",),
    "broadcast_to": ("torch_broadcast_to",),
    "ceil": ("torch_rounding",),
    "clip": ("torch_clip",),
    "count_nonzero": ("torch_count_nonzero",),
    "diagonal": ("torch_diagonal", "torch_view_shares"),
    "expm1": ("torch_expm1_log1p_grad",),
    "floor": ("torch_rounding",),
    "isclose": ("torch_isclose",),
    "log1p": ("torch_expm1_log1p_grad",),
    "log2": ("torch_expm1_log1p_grad",),
    "logical_and": ("torch_logical",),
    "logical_not": ("torch_logical",),
    "logical_or": ("torch_logical",),
    "logical_xor": ("torch_logical",),
    "nonzero": ("torch_nonzero",),
    "reciprocal": ("torch_reciprocal",),
    "remainder": ("torch_remainder",),
    "roll": ("torch_roll",),
    "round": ("torch_round",),
    "select": ("torch_select_narrow", "torch_view_shares"),
    "swapaxes": ("torch_swapaxes_movedim",),
    "trunc": ("torch_rounding",),
    "abs": ("torch_abs",),
    "allclose": ("allclose",),
    "amax": ("amax_dims",),
    "amin": ("torch_amin",),
    "arange": ("arange", "arange_float"),
    "argmax": ("torch_argmax",),
    "argmin": ("torch_argmin",),
    "argsort": ("torch_argsort",),
    "bool": ("dtype_names",),
    "concatenate": ("concatenate",),
    "cos": ("cos",),
    "cumsum": ("torch_cumsum",),
    "double": ("dtype_names",),
    "einsum": ("einsum",),
    "empty": ("empty",),
    "empty_like": ("empty_like",),
    "equal": ("equal", "equal_shapes"),
    "exp": ("exp", "exp_int"),
    "eye": ("eye",),
    "finfo": ("finfo_eps", "finfo_max"),
    "flip": ("flip",),
    "float16": ("dtype_names",),
    "float32": ("dtype_names",),
    "float64": ("dtype_names",),
    "full": ("full", "full_float"),
    "full_like": ("full_like",),
    "half": ("dtype_names",),
    "iinfo": ("iinfo_max",),
    "int16": ("dtype_names",),
    "int32": ("dtype_names",),
    "int64": ("dtype_names",),
    "int8": ("dtype_names",),
    "isfinite": ("isfinite",),
    "isinf": ("isinf",),
    "isnan": ("isnan",),
    "linspace": ("linspace",),
    "log": ("log", "log_negative"),
    "long": ("dtype_names",),
    "matmul": ("matmul", "matmul_vec"),
    "max": ("torch_max", "torch_max_other"),
    "maximum": ("maximum", "maximum_ties_grad"),
    "mean": ("torch_mean",),
    "min": ("torch_min",),
    "minimum": ("minimum",),
    "ones": ("ones",),
    "ones_like": ("ones_like",),
    "outer": ("outer",),
    "pow": ("pow", "pow_int_float"),
    "prod": ("torch_prod", "prod_empty"),
    "reshape": ("reshape",),
    "short": ("dtype_names",),
    "sign": ("sign", "sign_grad"),
    "sin": ("sin",),
    "sort": ("torch_sort",),
    "split": ("split",),
    "sqrt": ("sqrt", "sqrt_int"),
    "square": ("square",),
    "squeeze": ("torch_squeeze",),
    "stack": ("stack", "stack_promote"),
    "std": ("torch_std",),
    "sum": ("torch_sum",),
    "tanh": ("tanh",),
    "transpose": ("transpose",),
    "tril": ("tril", "tril_1d"),
    "triu": ("triu",),
    "uint8": ("dtype_names", "sort_uint8_descending"),
    "var": ("torch_var",),
    "uint16": ("uint_names",),
    "uint32": ("uint_names",),
    "uint64": ("uint_names",),
    "where": ("where", "where_scalars", "where_int_float"),
    "zeros": ("zeros", "zeros_int"),
    "zeros_like": ("zeros_like",),
    # Tensor methods and attributes
    ".T": ("T",),
    ".all": ("all", "all_dim"),
    ".any": ("any", "any_float"),
    ".argmax": ("argmax", "argmax_dim", "argmax_keepdim"),
    ".argmin": ("argmin",),
    ".argsort": ("argsort", "argsort_descending"),
    ".clip": ("clip", "clip_tensor_bounds", "clip_min_above_max"),
    ".cumsum": ("cumsum", "cumsum_int"),
    ".data": ("data",),
    ".device": ("device",),
    ".diagonal": ("diagonal", "diagonal_offset"),
    ".dtype": ("double",),
    ".flatten": ("flatten", "flatten_out_of_range", "flatten_0d"),
    ".item": ("item",),
    ".itemsize": ("itemsize",),
    ".mT": ("mT",),
    ".max": ("max", "max_dim", "max_dim_keepdim", "max_other", "max_dim_grad", "max_nan"),
    ".mean": ("mean", "mean_dim", "mean_int"),
    ".min": ("min", "min_dim"),
    ".nbytes": ("nbytes",),
    ".ndim": ("ndim",),
    ".nonzero": ("nonzero", "nonzero_tuple"),
    ".prod": ("prod", "prod_dim", "prod_int"),
    ".ravel": ("ravel",),
    ".repeat": ("repeat",),
    ".reshape": ("reshape",),
    ".round": ("round", "round_decimals"),
    ".shape": ("shape",),
    ".size": ("size", "size_dim"),
    ".sort": ("sort", "sort_descending", "sort_nan", "sort_nan_descending", "sort_bool"),
    ".squeeze": ("squeeze", "squeeze_dim_not_1", "squeeze_out_of_range"),
    ".std": ("std", "std_dim_positional", "std_dim_keepdim", "std_grad"),
    ".sum": ("sum", "sum_dim", "sum_int", "sum_bool"),
    ".swapaxes": ("swapaxes",),
    ".tolist": ("tolist",),
    ".transpose": ("transpose_method",),
    ".var": ("var", "var_dim", "var_dim_keepdim", "var_grad"),
    ".view": ("view", "view_minus_one", "view_after_transpose", "view_dtype"),
    # operators
    "__abs__": ("abs_dunder",),
    "__add__": ("float32_plus_0d_float64", "uint8_plus_300", "bool_plus_int"),
    "__and__": ("bool_and", "float_and"),
    "__bool__": ("bool_ambiguous",),
    "__eq__": ("comparisons",),
    "__float__": ("float_of_0d",),
    "__floordiv__": ("int_floordiv", "float_floordiv"),
    "__format__": ("format_0d",),
    "__ge__": ("comparisons",),
    "__getitem__": ("getitem_bool", "getitem_int_tensor"),
    "__gt__": ("comparisons",),
    "__iadd__": ("iadd_nonleaf_grad",),
    "__ifloordiv__": ("ifloordiv",),
    "__imod__": ("imod",),
    "__imul__": ("imul_int",),
    "__index__": ("index_of_0d",),
    "__int__": ("int_of_0d",),
    "__invert__": ("bool_or_not",),
    "__ipow__": ("ipow",),
    "__isub__": ("isub_leaf",),
    "__itruediv__": ("idiv_int",),
    "__le__": ("comparisons",),
    "__len__": ("len", "len_0d"),
    "__lt__": ("comparisons",),
    "__matmul__": ("matmul",),
    "__mod__": ("int_mod",),
    "__mul__": ("int_times_float", "int64_times_float32", "float16_times_int"),
    "__ne__": ("comparisons",),
    "__neg__": ("neg",),
    "__or__": ("bool_or_not",),
    "__pos__": ("pos",),
    "__pow__": ("pow_tensor",),
    "__radd__": ("radd",),
    "__rand__": ("bool_and",),
    "__rfloordiv__": ("rfloordiv",),
    "__rmatmul__": ("rmatmul",),
    "__rmod__": ("rmod",),
    "__rmul__": ("int_times_float",),
    "__ror__": ("bool_or_not",),
    "__rpow__": ("rpow",),
    "__rsub__": ("rsub",),
    "__rtruediv__": ("rtruediv",),
    "__rxor__": ("int_xor",),
    "__setitem__": ("slice_write", "view_write", "transpose_write", "setitem_grad"),
    "__sub__": ("rsub",),
    "__truediv__": ("int_div_float", "int_div_int"),
    "__xor__": ("int_xor",),
}

# Shared names that are not about computing (Python's object machinery, pickling, NumPy's
# array protocol) or that are modules of both: the walker skips them.
NOT_VALUES = {
    "__array__", "__array_priority__", "__class__", "__delattr__", "__dir__", "__doc__",
    "__getattribute__", "__getstate__", "__hash__", "__init__", "__init_subclass__", "__new__",
    "__reduce__", "__reduce_ex__", "__repr__", "__setattr__", "__setstate__", "__sizeof__",
    "__str__", "__subclasshook__", "random", "save", "load",
}  # fmt: skip


def run(case: str, torch: object, np: object) -> object:
    """Run one case's code with `torch` as given; return its `out` (or raise)."""
    namespace = {"torch": torch, "np": np}
    exec(SETUP, namespace)
    exec(CASES[case], namespace)
    return namespace["out"]


# ------------------------------------------------------------------------ comparing
_ERRORS = (IndexError, TypeError, ValueError, NotImplementedError, RuntimeError, AssertionError)


def _encode(value: object) -> object:
    """Floats that JSON cannot hold (nan, inf) as strings, recursively."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return repr(value)
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def normalize(value: object) -> dict:
    """What a case's `out` is, in a form PyTorch's and ours can be compared in (JSON-able)."""
    array = _as_array(value)
    if array is not None:
        dtype = str(value.dtype).removeprefix("torch.")
        return {"dtype": dtype, "shape": list(array.shape), "values": _encode(array.tolist())}
    import numpy

    if type(value).__name__ == "dtype" or isinstance(value, numpy.dtype):
        return {"py": str(value).removeprefix("torch."), "type": "dtype"}  # (torch's or NumPy's)
    if isinstance(value, (tuple, list)):  # (values, indices), torch.Size, lists of results
        return {"seq": [normalize(v) for v in value]}
    if hasattr(value, "item") and not isinstance(value, (bool, int, float, str)):
        value = value.item()  # (a NumPy scalar: finfo's eps)
    if isinstance(value, str):
        value = value.removeprefix("torch.")
    return {"py": _encode(value), "type": type(value).__name__}


def _as_array(value: object):
    if type(value).__name__ == "Tensor" or type(value).__name__ == "Parameter":
        if hasattr(value, "detach") and type(value).__module__.startswith("torch"):
            return value.detach().numpy()
        return value.numpy()
    return None


def error_of(exc: BaseException) -> dict:
    """The builtin exception classes an error is an instance of (what ported code catches)."""
    return {"error": sorted(c.__name__ for c in _ERRORS if isinstance(exc, c))}


def outcome(case: str, torch: object, np: object) -> dict:
    """`normalize` of what the case gives, or `error_of` what it raises."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return normalize(run(case, torch, np))
        except _ERRORS as exc:
            return error_of(exc)


def mismatch(got: dict, want: dict) -> str | None:
    """Why `got` (ours) is not `want` (PyTorch's), or None when they agree."""
    import numpy

    if "error" in want:
        if "error" not in got:
            return f"PyTorch raises {want['error']}, this package computes {got}"
        missing = set(want["error"]) - set(got["error"])
        return f"raises {got['error']}, PyTorch {want['error']}" if missing else None
    if "error" in got:
        return f"raises {got['error']}, PyTorch computes {want}"
    if "seq" in want:
        if "seq" not in got or len(got["seq"]) != len(want["seq"]):
            return f"got {got}, PyTorch gives a sequence of {len(want['seq'])}"
        for i, (g, w) in enumerate(zip(got["seq"], want["seq"])):
            why = mismatch(g, w)
            if why:
                return f"[{i}]: {why}"
        return None
    if "dtype" in want:
        if "dtype" not in got:
            return f"got {got}, PyTorch gives a {want['dtype']} tensor"
        if got["dtype"] != want["dtype"] or got["shape"] != want["shape"]:
            return (
                f"dtype {got['dtype']} shape {got['shape']}, PyTorch {want['dtype']} shape "
                f"{want['shape']}"
            )
        a, b = (numpy.array(_decode(v["values"]), dtype=float) for v in (got, want))
        tol = 1e-3 if want["dtype"] == "float16" else 2e-6
        if not numpy.allclose(a, b, rtol=tol, atol=tol, equal_nan=True):
            return f"values {a.tolist()}, PyTorch {b.tolist()}"
        return None
    g, w = got.get("py"), want["py"]
    if isinstance(w, float) and isinstance(g, (int, float)):
        return None if abs(g - w) <= 1e-6 * max(1.0, abs(w)) else f"{g}, PyTorch {w}"
    if g != w or got.get("type") != want["type"]:
        return f"{g!r} ({got.get('type')}), PyTorch {w!r} ({want['type']})"
    return None


def _decode(value: object) -> object:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, str) and value in ("nan", "inf", "-inf"):
        return float(value)
    return value
