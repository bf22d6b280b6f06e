"""Bessel functions of the Triton pointwise ops (pointwise_special.py holds the ops that
call them): I0, I1 and their scaled forms by the power series and Hankel's expansion;
K0, K1 (and e^x K) by the power series below 2 and Steed's continued fraction (CF2) above;
J0, J1, Y0, Y1 by the power series up to 8, Miller's backward recurrence with Neumann's
series for Y up to 25, and Hankel's expansion beyond. All in float64; the CPU's versions
are in native/pointwise_special.cpp.
"""
import triton
import triton.language as tl


@triton.jit
def _any(m):
    """Whether any lane of a block is set: the loops below run until every lane of the
    block has converged (a block runs in lock step)."""
    return tl.max(m.to(tl.int32), axis=0) > 0


# ---- Bessel functions -----------------------------------------------------------------

@triton.jit
def _hankel_pq(x, NU: tl.constexpr):
    """Hankel's asymptotic P, Q of order NU (0 or 1) for large x (20 terms)."""
    mu = 4.0 * NU * NU
    p = tl.zeros_like(x) + 1.0
    q = tl.zeros_like(x)
    term = tl.zeros_like(x) + 1.0
    for k in tl.static_range(1, 40):
        term = term * (mu - (2 * k - 1) * (2 * k - 1)) / (k * 8.0 * x)
        if k % 4 == 1:
            q += term
        elif k % 4 == 2:
            p -= term
        elif k % 4 == 3:
            q -= term
        else:
            p += term
    return p, q


@triton.jit
def _i_asym(x, NU: tl.constexpr):
    """e^-x I_NU(x) for large x: Hankel's expansion (the alternating one)."""
    mu = 4.0 * NU * NU
    s = tl.zeros_like(x) + 1.0
    term = tl.zeros_like(x) + 1.0
    for k in tl.static_range(1, 30):
        term = -term * (mu - (2 * k - 1) * (2 * k - 1)) / (k * 8.0 * x)
        s += term
    return s / tl.sqrt(2.0 * 3.141592653589793 * x)


@triton.jit
def _i_series(x, NU: tl.constexpr):
    """I_NU(x) by its power series (positive terms)."""
    q = x * x * 0.25
    term = tl.zeros_like(x) + 1.0
    s = term
    k = tl.zeros_like(x)
    it = 0
    while (it < 200) & _any(term > 1.1102230246251565e-16 * s):
        k += 1.0
        term = term * q / (k * (k + NU))
        s += term
        it += 1
    if NU == 1:
        s = s * x * 0.5
    return s


@triton.jit
def _bessel_i64(x, NU: tl.constexpr, SCALED: tl.constexpr):
    """I_NU(x), or e^-|x| I_NU(x) when SCALED."""
    a = tl.abs(x)
    big = a > 20.0
    ser = _i_series(tl.where(big, 1.0, a), NU)
    ab = tl.where(big, a, 21.0)
    asym = _i_asym(ab, NU)
    if SCALED:
        r = tl.where(big, asym, ser * tl.exp(-a))
    else:
        r = tl.where(big, asym * tl.exp(ab * 0.5) * tl.exp(ab * 0.5), ser)
    if NU == 1:
        r = tl.where(x < 0, -r, r)
    return tl.where(x != x, x, r)


@triton.jit
def _bessel_k64(x, NU: tl.constexpr, SCALED: tl.constexpr):
    """K_NU(x) (NU 0 or 1), or e^x K_NU(x) when SCALED: the power series up to 2,
    Steed's continued fraction (Thompson-Barnett) above."""
    small = x <= 2.0
    xs = tl.where(small & (x > 0.0), x, 1.0)
    q = xs * xs * 0.25
    lg = tl.log(xs * 0.5) + 0.5772156649015329
    term = tl.zeros_like(x) + 1.0
    h = tl.zeros_like(x)
    k = tl.zeros_like(x)
    if NU == 0:
        s = tl.zeros_like(x)
        i0 = term
        for _ in range(30):
            k += 1.0
            term = term * q / (k * k)
            h += 1.0 / k
            s += term * h
            i0 += term
        ks = s - lg * i0
    else:
        s = tl.zeros_like(x) + 1.0  # k = 0: H_0 + H_1
        i1 = term
        for _ in range(30):
            k += 1.0
            term = term * q / (k * (k + 1.0))
            h += 1.0 / k
            s += term * (2.0 * h + 1.0 / (k + 1.0))
            i1 += term
        ks = 1.0 / xs + lg * i1 * xs * 0.5 - xs * 0.25 * s
    if SCALED:
        ks = ks * tl.exp(xs)
    huge = x > 1e8
    xb = tl.where(small | huge, 3.0, x)
    b = 2.0 * (1.0 + xb)
    d = 1.0 / b
    hh = d
    delh = d
    q1 = tl.zeros_like(x)
    q2 = q1 + 1.0
    a1 = 0.25
    qq = q1 + a1
    c = q1 + a1
    aa = q1 - a1
    ss = 1.0 + qq * delh
    i = tl.zeros_like(x)
    dels = ss
    it = 0
    while (it < 500) & _any(tl.abs(dels) >= 1.1102230246251565e-16 * tl.abs(ss)):
        it += 1
        i += 1.0
        aa -= 2.0 * i
        c = -aa * c / (i + 1.0)
        qnew = (q1 - b * q2) / aa
        q1 = q2
        q2 = qnew
        qq += c * qnew
        b += 2.0
        d = 1.0 / (b + aa * d)
        delh = (b * d - 1.0) * delh
        hh += delh
        dels = qq * delh
        ss += dels
    hh = a1 * hh
    kmu = tl.sqrt(3.141592653589793 / (2.0 * xb)) / ss
    if NU == 1:
        kmu = kmu * (xb + 0.5 - hh) / xb
    if not SCALED:
        kmu = kmu * tl.exp(-xb)
    r = tl.where(small, ks, kmu)
    # beyond 1e8 the expansion's first term is exact in float64
    if SCALED:
        r = tl.where(huge, tl.sqrt(3.141592653589793 / (2.0 * tl.where(huge, x, 1.0))), r)
    else:
        r = tl.where(huge, 0.0, r)
    r = tl.where(x == 0.0, float("inf"), r)
    r = tl.where(x == float("inf"), 0.0, r)
    return tl.where((x < 0.0) | (x != x), float("nan"), r)


@triton.jit
def _bessel_jy64(x, NU: tl.constexpr, Y: tl.constexpr):
    """J_NU(|x|) (odd in x for NU = 1) or Y_NU(x): power series up to 8, Miller's backward
    recurrence with Neumann's series for Y up to 25, Hankel's expansion beyond."""
    a = tl.abs(x)
    if Y:
        a = x
    # power series
    xs = tl.where((a <= 8.0) & (a > 0.0), a, 1.0)
    q = -xs * xs * 0.25
    lg = tl.log(xs * 0.5) + 0.5772156649015329
    term = tl.zeros_like(x) + 1.0
    js = term
    hs = tl.zeros_like(x)
    h = tl.zeros_like(x)
    k = tl.zeros_like(x)
    if NU == 1:
        hs = hs + 1.0
    for _ in range(40):
        k += 1.0
        term = term * q / (k * (k + NU))
        h += 1.0 / k
        js += term
        if NU == 0:
            hs += term * h
        else:
            hs += term * (2.0 * h + 1.0 / (k + 1.0))
    if NU == 0:
        ser = js
        if Y:
            ser = 0.6366197723675814 * (lg * js - hs)
    else:
        ser = js * xs * 0.5
        if Y:
            ser = 0.6366197723675814 * (lg * ser - 1.0 / xs) - 0.3183098861837907 * xs * 0.5 * hs
    # Miller's backward recurrence from order 64, normalized by J0 + 2 sum J_2k = 1
    xm = tl.where((a > 8.0) & (a <= 25.0), a, 10.0)
    jp1 = tl.zeros_like(x)
    jk = jp1 + 1e-30
    norm = tl.zeros_like(x)
    neu = tl.zeros_like(x)   # sum (-1)^k J_2k / k, for Y0
    neu1 = tl.zeros_like(x)  # sum (-1)^k (J_2k-1 - J_2k+1) / k, for Y1
    j1 = tl.zeros_like(x)
    for step in tl.static_range(64, 0, -1):
        # jk holds J_step, jp1 J_{step+1}
        jm1 = 2.0 * step / xm * jk - jp1
        # jm1 is J_{step-1}
        if step % 2 == 0:
            norm += 2.0 * jk
            if (step // 2) % 2 == 0:
                neu += jk / (step // 2)
            else:
                neu -= jk / (step // 2)
        else:
            # odd step: J_step is J_{2m-1} or J_{2m+1}; accumulate (J_2k-1 - J_2k+1)/k
            m_lo = (step + 1) // 2  # J_step = J_{2m-1} with m = m_lo
            if m_lo % 2 == 0:
                neu1 += jk / m_lo
            else:
                neu1 -= jk / m_lo
            m_hi = (step - 1) // 2  # J_step = J_{2m+1} with m = m_hi
            if m_hi >= 1:
                if m_hi % 2 == 0:
                    neu1 -= jk / m_hi
                else:
                    neu1 += jk / m_hi
        if step == 1:
            j1 = jk
        jp1 = jk
        jk = jm1
    norm += jk
    j0m = jk / norm
    j1m = j1 / norm
    lgm = tl.log(xm * 0.5) + 0.5772156649015329
    if NU == 0:
        mil = j0m
        if Y:
            mil = 0.6366197723675814 * (lgm * j0m - 2.0 * neu / norm)
    else:
        mil = j1m
        if Y:
            mil = 0.6366197723675814 * (lgm * j1m - j0m / xm + neu1 / norm)
    # Hankel's expansion
    xb = tl.where(a > 25.0, a, 30.0)
    p, qh = _hankel_pq(xb, NU)
    chi = xb - (0.5 * NU + 0.25) * 3.141592653589793
    amp = tl.sqrt(0.6366197723675814 / xb)
    if Y:
        asym = amp * (p * tl.sin(chi) + qh * tl.cos(chi))
    else:
        asym = amp * (p * tl.cos(chi) - qh * tl.sin(chi))
    r = tl.where(a <= 8.0, ser, tl.where(a <= 25.0, mil, asym))
    if Y:
        r = tl.where(x == 0.0, -float("inf"), r)
        r = tl.where(x < 0.0, float("nan"), r)
    else:
        if NU == 0:
            r = tl.where(x == 0.0, 1.0, r)
        else:
            r = tl.where(x == 0.0, 0.0, r)
            r = tl.where(x < 0.0, -r, r)
    return tl.where((x != x) | (tl.abs(x) == float("inf")), float("nan"), r)
