"""Linear algebra: singular and non-square inputs, NaN, integer dtypes, mismatched shapes,
cholesky of non-positive-definite matrices, bad norms."""
from badinput import C, E, OK

R, T, I, V = "RuntimeError", "TypeError", "IndexError", "ValueError"
NI = "NotImplementedError"
LA = "LinAlgError"
NAN = float("nan")


def sing(m, d):
    return m.tensor([[1., 2.], [2., 4.]], device=d)


def rect(m, d):
    return m.arange(6., device=d).reshape(2, 3)


def spd(m, d):
    return m.tensor([[4., 1.], [1., 3.]], device=d)


def nanm(m, d):
    return m.tensor([[1., NAN], [NAN, 1.]], device=d)


def im(m, d):
    return m.tensor([[2, 1], [1, 2]], device=d)


def notpd(m, d):
    return m.tensor([[1., 2.], [2., 1.]], device=d)


CASES = [
    # inv
    C("inv_singular", lambda m, d: m.linalg.inv(sing(m, d)), E(LA, "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed because the input matrix is singular.")),
    C("inv_zeros", lambda m, d: m.linalg.inv(m.zeros(2, 2, device=d)), E(LA, "the inversion could not be completed because the input matrix is singular")),
    C("inv_nonsquare", lambda m, d: m.linalg.inv(rect(m, d)), E(R, "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices")),
    C("inv_1d", lambda m, d: m.linalg.inv(m.ones(3, device=d)), E(R, "linalg.inv: The input tensor A must have at least 2 dimensions.")),
    C("inv_int", lambda m, d: m.linalg.inv(im(m, d)), E(R, "linalg.inv: Expected a floating point or complex tensor as input. Got Long")),
    C("inv_half", lambda m, d: m.linalg.inv(spd(m, d).half()), E(R, "linalg.inv: Low precision dtypes not supported. Got Half")),
    C("inv_nan_ok", lambda m, d: m.linalg.inv(nanm(m, d)), OK),
    C("inv_ok_empty", lambda m, d: m.linalg.inv(m.zeros(0, 0, device=d)), OK),
    C("inv_batch_singular", lambda m, d: m.linalg.inv(m.stack([spd(m, d), sing(m, d)])), E(LA, "linalg.inv: (Batch element 1): The diagonal element 2 is zero")),
    C("inverse_singular", lambda m, d: m.inverse(sing(m, d)), E(LA, "the inversion could not be completed because the input matrix is singular")),
    C("inverse_method_nonsquare", lambda m, d: rect(m, d).inverse(), E(R, "A must be batches of square matrices")),
    # det / slogdet / logdet
    C("det_nonsquare", lambda m, d: m.linalg.det(rect(m, d)), E(R, "linalg.det: A must be batches of square matrices, but they are 2 by 3 matrices")),
    C("det_int", lambda m, d: m.linalg.det(im(m, d)), E(R, "linalg.det: Expected a floating point or complex tensor as input. Got Long")),
    C("det_1d", lambda m, d: m.det(m.ones(3, device=d)), E(R, "linalg.det: The input tensor A must have at least 2 dimensions.")),
    C("det_singular_ok", lambda m, d: m.linalg.det(sing(m, d)), OK),
    C("det_nan_ok", lambda m, d: m.linalg.det(nanm(m, d)), OK),
    C("det_ok_empty", lambda m, d: m.linalg.det(m.zeros(0, 0, device=d)), OK),
    C("slogdet_nonsquare", lambda m, d: m.linalg.slogdet(rect(m, d)), E(R, "linalg.slogdet: A must be batches of square matrices")),
    C("slogdet_singular_ok", lambda m, d: m.linalg.slogdet(sing(m, d)), OK),
    C("logdet_negative_ok", lambda m, d: m.logdet(m.tensor([[-1., 0.], [0., 1.]], device=d)), OK),
    C("logdet_int", lambda m, d: m.logdet(im(m, d)), E(R, "Expected a floating point or complex tensor as input")),
    # solve / lstsq / solve_triangular
    C("solve_singular", lambda m, d: m.linalg.solve(sing(m, d), m.ones(2, device=d)), E(LA, "linalg.solve: The solver failed because the input matrix is singular.")),
    C("solve_nonsquare", lambda m, d: m.linalg.solve(rect(m, d), m.ones(2, device=d)), E(R, "linalg.solve: A must be batches of square matrices, but they are 2 by 3 matrices")),
    C("solve_mismatch", lambda m, d: m.linalg.solve(spd(m, d), m.ones(3, device=d)), E(R, "linalg.solve: Incompatible shapes of A and B for the equation AX = B (2x2 and 3x1)")),
    C("solve_int", lambda m, d: m.linalg.solve(im(m, d), m.ones(2, dtype=m.int64, device=d)), E(R, "linalg.solve: Expected a floating point or complex tensor as input. Got Long")),
    C("solve_dtype_mismatch", lambda m, d: m.linalg.solve(spd(m, d), m.ones(2, dtype=m.float64, device=d)), E(R, "linalg.solve: Expected A and B to have the same dtype, but found A of type Float and B of type Double instead")),
    C("solve_nan_ok", lambda m, d: m.linalg.solve(nanm(m, d), m.ones(2, device=d)), OK),
    C("solve_ok_batched_broadcast", lambda m, d: m.linalg.solve(m.stack([spd(m, d), spd(m, d)]), m.ones(2, device=d)), OK),
    C("lstsq_mismatch", lambda m, d: m.linalg.lstsq(rect(m, d), m.ones(3, 1, device=d)), E(R, "torch.linalg.lstsq: input.size(-2) should match other.size(-2)")),
    C("lstsq_int", lambda m, d: m.linalg.lstsq(im(m, d), im(m, d)), E(R, "This function doesn't handle types other than float and double")),
    C("lstsq_1d", lambda m, d: m.linalg.lstsq(m.ones(3, device=d), m.ones(3, device=d)), E(R, "torch.linalg.lstsq: input must have at least 2 dimensions.")),
    C("solve_triangular_no_upper", lambda m, d: m.linalg.solve_triangular(spd(m, d), m.ones(2, 1, device=d)), E(T, "linalg_solve_triangular() missing 1 required positional arguments:")),
    C("solve_triangular_mismatch", lambda m, d: m.linalg.solve_triangular(spd(m, d), m.ones(3, 1, device=d), upper=True), E(R, "linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B (2x2 and 3x1)")),
    C("solve_triangular_1d_b", lambda m, d: m.linalg.solve_triangular(spd(m, d), m.ones(2, device=d), upper=True), E(R, "linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")),
    C("solve_triangular_singular_ok", lambda m, d: m.linalg.solve_triangular(m.zeros(2, 2, device=d), m.ones(2, 1, device=d), upper=True), OK),
    # cholesky
    C("cholesky_not_pd", lambda m, d: m.linalg.cholesky(notpd(m, d)), E(LA, "linalg.cholesky: The factorization could not be completed because the input is not positive-definite (the leading minor of order 2 is not positive-definite).")),
    C("cholesky_neg", lambda m, d: m.linalg.cholesky(-spd(m, d)), E(LA, "the leading minor of order 1 is not positive-definite")),
    C("cholesky_zeros", lambda m, d: m.linalg.cholesky(m.zeros(2, 2, device=d)), E(LA, "the leading minor of order 1 is not positive-definite")),
    C("cholesky_nan", lambda m, d: m.linalg.cholesky(nanm(m, d)), E(LA, "is not positive-definite")),
    C("cholesky_nonsquare", lambda m, d: m.linalg.cholesky(rect(m, d)), E(R, "linalg.cholesky: A must be batches of square matrices, but they are 2 by 3 matrices")),
    C("cholesky_int", lambda m, d: m.linalg.cholesky(im(m, d)), E(R, "linalg.cholesky: Expected a floating point or complex tensor as input. Got Long")),
    C("cholesky_batch_not_pd", lambda m, d: m.linalg.cholesky(m.stack([spd(m, d), notpd(m, d)])), E(LA, "linalg.cholesky: (Batch element 1): The factorization could not be completed")),
    C("cholesky_ok", lambda m, d: m.linalg.cholesky(spd(m, d)), OK),
    C("cholesky_ok_upper", lambda m, d: m.linalg.cholesky(spd(m, d), upper=True), OK),
    # eigh / eigvalsh / svd / qr
    C("eigh_nonsquare", lambda m, d: m.linalg.eigh(rect(m, d)), E(R, "linalg.eigh: A must be batches of square matrices, but they are 2 by 3 matrices")),
    C("eigh_int", lambda m, d: m.linalg.eigh(im(m, d)), E(NI, "\"linalg_eigh_cpu\" not implemented for 'Long'")),
    C("eigh_bad_uplo", lambda m, d: m.linalg.eigh(spd(m, d), UPLO="X"), E(R, "Expected UPLO argument to be 'L' or 'U', but got X")),
    C("eigh_nan_ok", lambda m, d: m.linalg.eigh(nanm(m, d)), OK),
    C("eigvalsh_1d", lambda m, d: m.linalg.eigvalsh(m.ones(3, device=d)), E(R, "linalg.eigh: The input tensor A must have at least 2 dimensions.")),
    C("eigvalsh_ok", lambda m, d: m.linalg.eigvalsh(spd(m, d)), OK),
    C("svd_int", lambda m, d: m.linalg.svd(im(m, d)), E(R, "linalg.svd: Expected a floating point or complex tensor as input. Got Long")),
    C("svd_1d", lambda m, d: m.linalg.svd(m.ones(3, device=d)), E(R, "linalg.svd: The input tensor A must have at least 2 dimensions.")),
    C("svd_nan", lambda m, d: m.linalg.svd(nanm(m, d)), E(LA, "linalg.svd: The algorithm failed to converge because the input matrix"), crash=True),
    C("svdvals_int", lambda m, d: m.linalg.svdvals(im(m, d)), E(R, "linalg.svd: Expected a floating point or complex tensor as input. Got Long")),
    C("svdvals_ok_rect", lambda m, d: m.linalg.svdvals(rect(m, d)), OK),
    C("qr_int", lambda m, d: m.linalg.qr(im(m, d)), E(R, "linalg.qr: Expected a floating point or complex tensor as input. Got Long")),
    C("qr_1d", lambda m, d: m.linalg.qr(m.ones(3, device=d)), E(R, "linalg.qr: The input tensor A must have at least 2 dimensions.")),
    C("qr_bad_mode", lambda m, d: m.linalg.qr(spd(m, d), mode="bogus"), E(R, "qr received unrecognized mode 'bogus' but expected one of 'reduced' (default), 'r', or 'complete'")),
    C("pinv_int", lambda m, d: m.linalg.pinv(im(m, d)), E(R, "linalg.pinv(Long{[2, 2]}): expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble types")),
    C("pinv_ok_singular", lambda m, d: m.linalg.pinv(sing(m, d)), OK, tol=(1e-4, 1e-5)),
    C("matrix_rank_int", lambda m, d: m.linalg.matrix_rank(im(m, d)), E(R, "This function doesn't handle types other than float and double")),
    C("matrix_rank_ok_singular", lambda m, d: m.linalg.matrix_rank(sing(m, d)), OK),
    # matrix_power / products / norms
    C("matrix_power_nonsquare", lambda m, d: m.linalg.matrix_power(rect(m, d), 2), E(R, "linalg.matrix_power: A must be batches of square matrices, but they are 2 by 3 matrices")),
    C("matrix_power_neg_singular", lambda m, d: m.linalg.matrix_power(sing(m, d), -1), E(LA, "linalg.inv: The diagonal element 2 is zero")),
    C("matrix_power_neg_int", lambda m, d: m.linalg.matrix_power(im(m, d), -1), E(R, "linalg.inv: Expected a floating point or complex tensor as input. Got Long")),
    C("matrix_power_float_n", lambda m, d: m.linalg.matrix_power(spd(m, d), 1.5), E(T, "linalg_matrix_power(): argument 'n' (position 2) must be int, not float")),
    C("matrix_power_ok_zero", lambda m, d: m.linalg.matrix_power(im(m, d), 0), OK),
    C("multi_dot_one", lambda m, d: m.linalg.multi_dot([spd(m, d)]), E(R, "multi_dot(): expected at least 2 tensors but got 1")),
    C("multi_dot_mismatch", lambda m, d: m.linalg.multi_dot([spd(m, d), rect(m, d).t()]), E(R, "multi_dot(): tensors 0 and 1 with shapes [2, 2] and [3, 2] cannot be multiplied")),
    C("multi_dot_3d", lambda m, d: m.linalg.multi_dot([spd(m, d), m.ones(2, 2, 2, device=d)]), E(R, "multi_dot(): the last tensor must be 1D or 2D but got 3D")),
    C("vecdot_mismatch", lambda m, d: m.linalg.vecdot(m.ones(3, device=d), m.ones(4, device=d)), E(R, "inconsistent tensor size, expected tensor [3] and src [4] to have the")),
    C("matrix_norm_1d", lambda m, d: m.linalg.matrix_norm(m.ones(3, device=d)), E(R, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")),
    C("matrix_norm_bad_ord", lambda m, d: m.linalg.matrix_norm(spd(m, d), ord="abc"), E(R, "linalg.matrix_norm: Order abc not supported.")),
    C("matrix_norm_int_ord", lambda m, d: m.linalg.matrix_norm(spd(m, d), ord=3), E(R, "linalg.matrix_norm: Order 3 not supported.")),
    C("vector_norm_int", lambda m, d: m.linalg.vector_norm(m.ones(3, dtype=m.int64, device=d)), E(R, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long")),
    C("vector_norm_dim_oob", lambda m, d: m.linalg.vector_norm(m.ones(3, device=d), dim=1), E(I, "Dimension out of range")),
    C("vector_norm_ok_inf", lambda m, d: m.linalg.vector_norm(m.tensor([1., -3.], device=d), ord=float("inf")), OK),
    C("norm_bad_p", lambda m, d: m.linalg.norm(m.ones(3, device=d), ord="fro"), E(R, "linalg.matrix_norm: The input tensor A must have at least 2")),
    C("norm_3d_ord", lambda m, d: m.linalg.norm(m.ones(2, 2, 2, device=d), ord=2), E(R, "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D.")),
    C("norm_ok_empty", lambda m, d: m.linalg.norm(m.zeros(0, device=d)), OK),
    C("linalg_matmul_mismatch", lambda m, d: m.linalg.matmul(rect(m, d), rect(m, d)), E(R, "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)")),
]
