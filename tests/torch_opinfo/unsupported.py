"""OpInfos of PyTorch's op_db the framework does not support on purpose, and the known
disagreements of those it does (keys: ``name`` or ``name.variant_test_name``)."""

# deliberately not supported: one line of reason each
UNSUPPORTED = {
    "chalf": "complex32 (chalf) is not a dtype of the framework",
    # layouts and tensor kinds the framework does not have
    "sparse.sampled_addmm": "sparse layouts are not supported",
    "hash_tensor": "its result is uint64, a dtype the framework does not have",
}

# torch-internal entry points and CUDA-only ops, not public API: the coverage goal leaves
# them aside (tools/opinfo_report.py counts them apart)
INTERNAL = {
    "torch.ops.aten._flash_attention_forward": "aten-internal kernel entry point",
    "torch.ops.aten._efficient_attention_forward": "aten-internal kernel entry point",
    "_segment_reduce": "private torch op",
    "_softmax_backward_data": "the framework's private op of that name takes a log flag, not "
                              "torch's input_dtype",
    "_chunk_cat": "private torch op",
    "_unsafe_masked_index": "private torch op",
    "_unsafe_masked_index_put_accumulate": "private torch op",
    "_native_batch_norm_legit": "private torch op",
    "_batch_norm_with_update": "private torch op",
    "_upsample_bilinear2d_aa": "private torch op",
    "jiterator_unary": "CUDA-only jiterator of torch",
    "jiterator_binary": "CUDA-only jiterator of torch",
    "jiterator_4inputs_with_extra_args": "CUDA-only jiterator of torch",
    "jiterator_binary_return_by_ref": "CUDA-only jiterator of torch",
    "jiterator_2inputs_2outputs": "CUDA-only jiterator of torch",
    "torch.ops.aten._safe_softmax.default": "aten-internal kernel entry point",
    "torch._scaled_mm": "private torch op (CUDA float8 GEMM)",
    "torch._scaled_mm_v2": "private torch op (CUDA float8 GEMM)",
    "slice": "aten.slice.Tensor, the aten op behind indexing with a slice",
    "native_dropout_backward": "aten-internal backward kernel",
    "max_pool2d_with_indices_backward": "aten-internal backward kernel",
}

# random or uninitialised outputs: compared by dtype and shape only
RANDOM_OPS = {
    "bernoulli", "cauchy", "exponential", "geometric", "log_normal", "normal",
    "normal.in_place", "normal.number_mean", "uniform", "multinomial", "rand_like",
    "randn_like", "randint_like", "randint", "randn",
    "empty", "empty_like", "empty_strided", "empty_permuted", "new_empty",
    "new_empty_strided", "nn.functional.dropout", "nn.functional.dropout2d",
    "nn.functional.dropout3d", "nn.functional.alpha_dropout",
    "nn.functional.feature_alpha_dropout", "nn.functional.feature_alpha_dropout.with_train",
    "nn.functional.rrelu", "nn.functional.fractional_max_pool2d",
    "nn.functional.fractional_max_pool3d", "svd_lowrank", "pca_lowrank",
}

# outputs unique only up to a phase (eigenvectors): compared after the OpInfo's own
# output_process_fn_grad (abs of the eigenvectors)
UP_TO_PHASE = {"linalg.eig", "linalg.eigh"}

# known disagreements (the test xfails these): what differs, why it is left for now
KNOWN_DISAGREEMENTS = {
    # order of ties and non-unique results (torch's CPU kernels happen to be stable)
    "sort": "indices of equal values (bool, 8000 elements) come in another order",
    "argsort": "indices of equal values (bool, 8000 elements) come in another order",
    "kthvalue": "index returned among equal int64 values differs",
    "topk": "indices returned among equal int64 values differ",
    # torch's gradient is the wrong one (tests/autograd/test_op_grads.py TORCH_GRAD_WRONG)
    "as_strided_scatter": ("torch's input gradient is grad at the scattered positions and "
                           "zero elsewhere (the reverse of the true one, which we give)"),
    # precision, and random (dropout) samples
    "matrix_exp": "float32: relative error 2e-3 on one element of an ill-conditioned sample",
    "nn.functional.multi_head_attention_forward": ("the dropout_p=0.5 samples (training): "
                                                   "random masks, torch's generator's"),
    "nn.functional.scaled_dot_product_attention": ("the dropout_p=0.5 samples: random masks, "
                                                   "torch's generator's"),
    "special.bessel_j0": "float64: relative error 7e-6 (abs 2e-7) near zeros of J0",
    "special.bessel_y1": "float64: relative error 7e-6 (abs 3e-7) near a zero of Y1",
    # the walk moves every tensor to cuda, but torch wants these on the cpu
    "tensor_split": "walk artefact: tensor_indices_or_sections must stay on the cpu",
}
