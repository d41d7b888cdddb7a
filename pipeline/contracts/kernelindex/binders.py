"""The binders of KernelIndex's curated kernels: a row's config -> axes, or None when the config's shape is not the one
the kernel knows (the CSV spans script eras; each binder guards on its era's keys). Mirrors the `bind` functions of
`apps/web/src/server/import/liger/kernels.ts`, `kernels-extra.ts` and `kernels-losses.ts` and the guards `int`, `eps`,
`dtypeOf` of `types.ts`, github.com/SamMausberg/KernelIndex at e6c5a71 (a reading copy: ../shared/reference/kernelindex,
relative to the checkout).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from pipeline.contracts.kernelindex.liger_types import DTYPES

_UNDEFINED = object()


def _get(config: Any, key: str) -> Any:
    # `config.key` in JS: a missing key, or any non-object config, reads as undefined.
    return config.get(key, _UNDEFINED) if isinstance(config, dict) else _UNDEFINED


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _int(value: Any) -> float | None:
    # types.ts `int`: a number, an integer, > 0
    if _is_number(value) and math.isfinite(value) and float(value).is_integer() and value > 0:
        return float(value)
    return None


def _eps(value: Any) -> float | None:
    # types.ts `eps`: a finite number > 0
    return float(value) if _is_number(value) and math.isfinite(value) and value > 0 else None


def _dtype(value: Any) -> str | None:
    return DTYPES.get(value) if isinstance(value, str) else None


def _is(value: Any, expected: Any) -> bool:
    # JS `===` against a literal number, boolean or string
    if isinstance(expected, bool):
        return value is expected
    if _is_number(expected):
        return _is_number(value) and value == expected
    return isinstance(value, str) and value == expected


Binding = dict[str, Any]  # {"axes": {name: number}, "dtype": str, "scalars": {name: number} | None}


def _bind_rows_hidden(x, x_name, c, with_eps):
    rows, dtype = _int(_get(c, "M")), _dtype(_get(c, "dtype"))
    epsilon = _eps(_get(c, "eps")) if with_eps else None
    if not rows or not dtype or (with_eps and not epsilon):
        return None
    if x_name not in ("H", "N"):
        return None
    return {"axes": {"rows": rows, "hidden": x}, "dtype": dtype, "scalars": {"eps": epsilon} if epsilon else None}


def _bind_tokens_vocab(x, x_name, c):
    batch, seq = _int(_get(c, "B")), _int(_get(c, "T"))
    if not batch or not seq or x_name != "V":
        return None
    return {"axes": {"tokens": batch * seq, "vocab": x}, "dtype": "fp32"}


def _bind_jsd(x, x_name, c):
    if x_name == "V":
        return _bind_tokens_vocab(x, x_name, c)
    if x_name == "BT":
        vocab = _int(_get(c, "vocab_size"))
        return {"axes": {"tokens": x, "vocab": vocab}, "dtype": "fp32"} if vocab else None
    return None


def _bind_embedding(x, x_name, c):
    batch, seq, hidden = _int(_get(c, "B")), _int(_get(c, "T")), _int(_get(c, "D"))
    dtype = _dtype(_get(c, "dtype"))
    if not batch or not seq or not hidden or not dtype or x_name != "V":
        return None
    return {"axes": {"batch": batch, "seq": seq, "hidden": hidden, "vocab": x}, "dtype": dtype}


def _bind_rope(x, x_name, c):
    q_heads, kv_heads = _int(_get(c, "num_q_heads")), _int(_get(c, "num_kv_heads"))
    dtype = _dtype(_get(c, "dtype"))
    if not q_heads or not kv_heads or not dtype:
        return None
    seq = x if x_name == "T" else _int(_get(c, "seq_len"))
    hidden = x if x_name == "H" else _int(_get(c, "hidden_size"))
    if not seq or not hidden or math.fmod(hidden, q_heads) != 0:
        return None
    return {"axes": {"seq": seq, "hidden": hidden, "q_heads": q_heads, "kv_heads": kv_heads}, "dtype": dtype}


def _bind_mlp(x, x_name, c, batch_key, act):
    batch, hidden = _int(_get(c, batch_key)), _int(_get(c, "hidden_size"))
    intermediate, dtype = _int(_get(c, "intermediate_size")), _dtype(_get(c, "dtype"))
    if not batch or not hidden or not intermediate or not dtype:
        return None
    if x_name != "T" or not _is(_get(c, "hidden_act"), act):
        return None
    return {"axes": {"batch": batch, "seq": x, "hidden": hidden, "intermediate": intermediate}, "dtype": dtype}


def _bind_relu_squared(x, x_name, c):
    rows, dtype = _int(_get(c, "M")), _dtype(_get(c, "dtype"))
    if not rows or not dtype or x_name != "N":
        return None
    return {"axes": {"rows": rows, "hidden": x}, "dtype": dtype}


def _bind_group_norm(x, x_name, c):
    batch, hidden, per_group = _int(_get(c, "M")), _int(_get(c, "H")), _int(_get(c, "channels_per_group"))
    dtype, epsilon = _dtype(_get(c, "dtype")), _eps(_get(c, "eps"))
    if not batch or not hidden or not per_group or not dtype or not epsilon:
        return None
    if x_name != "C" or math.fmod(x, per_group) != 0:
        return None
    axes = {"batch": batch, "channels": x, "hidden": hidden, "channels_per_group": per_group}
    return {"axes": axes, "dtype": dtype, "scalars": {"eps": epsilon}}


def _bind_sparsemax(x, x_name, c):
    batch, seq, dtype = _int(_get(c, "B")), _int(_get(c, "T")), _dtype(_get(c, "dtype"))
    if not batch or not seq or not dtype:
        return None
    if x_name != "V" or not _is(_get(c, "dim"), -1):
        return None
    return {"axes": {"tokens": batch * seq, "features": x}, "dtype": dtype}


def _bind_megatron_rms_norm(x, x_name, c):
    seq, batch = _int(_get(c, "S")), _int(_get(c, "B"))
    if not seq or not batch or x_name != "H":
        return None
    return {"axes": {"seq": seq, "batch": batch, "hidden": x}, "dtype": "bf16", "scalars": {"eps": 1e-6}}


def _bind_megatron_swiglu(x, x_name, c):
    seq, batch = _int(_get(c, "S")), _int(_get(c, "B"))
    if not seq or not batch or x_name != "ffn_local":
        return None
    return {"axes": {"seq": seq, "batch": batch, "ffn": x}, "dtype": "bf16"}


def _bind_megatron_cross_entropy(x, x_name, c):
    seq, batch = _int(_get(c, "S")), _int(_get(c, "B"))
    if not seq or not batch or x_name != "V" or not _is(_get(c, "TP"), 1):
        return None
    return {"axes": {"seq": seq, "batch": batch, "vocab": x}, "dtype": "bf16"}


def _bind_fused_moe(x, x_name, c):
    hidden, intermediate, k = _int(_get(c, "H")), _int(_get(c, "intermediate_dim")), _int(_get(c, "K"))
    dtype = _dtype(_get(c, "dtype"))
    if not hidden or not intermediate or not k or not dtype:
        return None
    tokens = x if x_name == "T" else _int(_get(c, "T"))
    experts = x if x_name == "E" else _int(_get(c, "E"))
    if not tokens or not experts or x_name not in ("T", "E"):
        return None
    axes = {"tokens": tokens, "hidden": hidden, "intermediate": intermediate, "experts": experts, "k": k}
    return {"axes": axes, "dtype": dtype}


def _bind_neighborhood_attention(x, x_name, c):
    batch, hidden, heads = _int(_get(c, "batch_size")), _int(_get(c, "hidden_size")), _int(_get(c, "num_heads"))
    kernel, dilation = _int(_get(c, "kernel_size")), _int(_get(c, "dilation"))
    dtype = _dtype(_get(c, "dtype"))
    if not batch or not hidden or not heads or not kernel or not dilation or not dtype:
        return None
    if x_name != "seq_len" or not _is(_get(c, "bias"), True):
        return None
    if math.fmod(hidden, heads) != 0:
        return None
    axes = {"batch": batch, "seq": x, "hidden": hidden, "heads": heads, "kernel_size": kernel, "dilation": dilation}
    return {"axes": axes, "dtype": dtype}


def _bind_mta(x, x_name, c):
    batch, heads_in, heads_out = _int(_get(c, "B")), _int(_get(c, "C_in")), _int(_get(c, "C_out"))
    k, dtype = _int(_get(c, "K")), _dtype(_get(c, "dtype"))
    if not batch or not heads_in or not heads_out or not k or not dtype:
        return None
    if x_name != "L" or not _is(_get(c, "groups"), 1) or not _is(_get(c, "bias"), True):
        return None
    return {"axes": {"batch": batch, "heads_in": heads_in, "heads_out": heads_out, "seq": x, "k": k}, "dtype": dtype}


def _bind_linear_bt(x, x_name, c, scalars=None):
    hidden, vocab, dtype = _int(_get(c, "H")), _int(_get(c, "V")), _dtype(_get(c, "dtype"))
    if not hidden or not vocab or not dtype or x_name != "BT":
        return None
    return {"axes": {"tokens": x, "hidden": hidden, "vocab": vocab}, "dtype": dtype, "scalars": scalars}


def _bind_distill(x, x_name, c):
    hidden, vocab, dtype = _int(_get(c, "H")), _int(_get(c, "V")), _dtype(_get(c, "dtype"))
    hard, soft = _get(c, "weight_hard_loss"), _get(c, "weight_soft_loss")
    if not hidden or not vocab or not dtype or x_name != "BT":
        return None
    if not _is(_get(c, "bias"), False) or math.fmod(hidden, 2) != 0:
        return None
    if not _is_number(hard) or not _is_number(soft):
        return None
    axes = {"tokens": x, "hidden": hidden, "vocab": vocab}
    return {"axes": axes, "dtype": dtype, "scalars": {"weight_hard_loss": hard, "weight_soft_loss": soft}}


def _bind_preference(x, x_name, c):
    seq, hidden, vocab = _int(_get(c, "T")), _int(_get(c, "H")), _int(_get(c, "V"))
    dtype = _dtype(_get(c, "dtype"))
    if not seq or not hidden or not vocab or not dtype or x_name != "B":
        return None
    return {"axes": {"batch": x, "seq": seq, "hidden": hidden, "vocab": vocab}, "dtype": dtype}


def _bind_kto(x, x_name, c):
    seq, hidden, vocab = _int(_get(c, "T")), _int(_get(c, "H")), _int(_get(c, "V"))
    dtype, beta = _dtype(_get(c, "dtype")), _get(c, "beta")
    if not seq or not hidden or not vocab or not dtype or x_name != "B":
        return None
    if not _is(_get(c, "bias"), True) or not _is_number(beta):
        return None
    return {
        "axes": {"batch": x, "seq": seq, "hidden": hidden, "vocab": vocab},
        "dtype": dtype,
        "scalars": {"beta": beta},
    }


def _bind_grpo(x, x_name, c, level):
    seq, vocab, dtype = _int(_get(c, "T")), _int(_get(c, "V")), _dtype(_get(c, "dtype"))
    if not seq or not vocab or not dtype or x_name != "B":
        return None
    if not _is(_get(c, "importance_sampling_level"), level):
        return None
    return {"axes": {"batch": x, "seq": seq, "vocab": vocab}, "dtype": dtype}


BINDERS: dict[str, Callable[..., Binding | None]] = {
    "rows_hidden": _bind_rows_hidden,
    "tokens_vocab": _bind_tokens_vocab,
    "jsd": _bind_jsd,
    "embedding": _bind_embedding,
    "rope": _bind_rope,
    "mlp": _bind_mlp,
    "relu_squared": _bind_relu_squared,
    "group_norm": _bind_group_norm,
    "sparsemax": _bind_sparsemax,
    "megatron_rms_norm": _bind_megatron_rms_norm,
    "megatron_swiglu": _bind_megatron_swiglu,
    "megatron_cross_entropy": _bind_megatron_cross_entropy,
    "fused_moe": _bind_fused_moe,
    "neighborhood_attention": _bind_neighborhood_attention,
    "mta": _bind_mta,
    "linear_bt": _bind_linear_bt,
    "distill": _bind_distill,
    "preference": _bind_preference,
    "kto": _bind_kto,
    "grpo": _bind_grpo,
}


def bind(kernel: Mapping[str, Any], x: float, x_name: str, config: Any) -> Binding | None:
    name, params = kernel["bind"]
    return BINDERS[name](x, x_name, config, **params)
