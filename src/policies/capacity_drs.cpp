// SPDX-License-Identifier: MIT
// Dominant resource shares of capacity queues with exact decimal fair-sharing weights: the
// weight of a double, the DRS of a node, and exact comparison and rounding of shares divided by
// weights of any magnitude (fixed-width multi-word integers, no floating point).
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>

#include <hetsched/policies/capacity_queue.hpp>

namespace hetsched {
namespace {

__extension__ typedef unsigned __int128 u128;

// Compares a/b with c/d exactly (b, d > 0) by continued fractions; never overflows.
int compare_fraction(u128 a, u128 b, u128 c, u128 d) {
  if (((a | b | c | d) >> 64) == 0) {
    const u128 l = a * d;  // both products fit: each factor is below 2^64
    const u128 r = c * b;
    return l < r ? -1 : (l > r ? 1 : 0);
  }
  for (;;) {
    const u128 qa = a / b;
    const u128 qc = c / d;
    if (qa != qc) return qa < qc ? -1 : 1;
    const u128 ra = a % b;
    const u128 rc = c % d;
    if (ra == 0 && rc == 0) return 0;
    if (ra == 0) return -1;
    if (rc == 0) return 1;
    // ra/b < rc/d  <=>  d/rc < b/ra
    a = d;
    c = b;
    b = rc;
    d = ra;
  }
}

// An unsigned integer of 384 bits (six 64-bit words, least significant first): enough for a
// product of two amounts (< 2^63 each), a weight's digits (< 2^57) and a power of ten below
// 10^57 (< 2^190), the largest product the comparisons below form.
class wide {
 public:
  explicit wide(std::uint64_t v = 0) { w_[0] = v; }

  // *this *= m (the callers keep the product within 384 bits).
  void mul(std::uint64_t m) {
    u128 carry = 0;
    for (auto& word : w_) {
      const u128 p = static_cast<u128>(word) * m + carry;
      word = static_cast<std::uint64_t>(p);
      carry = p >> 64;
    }
  }
  void mul_pow10(int e) {
    for (; e >= 19; e -= 19) mul(10'000'000'000'000'000'000ULL);
    std::uint64_t p = 1;
    for (; e > 0; --e) p *= 10;
    mul(p);
  }
  [[nodiscard]] int compare(const wide& o) const {
    for (std::size_t i = w_.size(); i-- > 0;)
      if (w_[i] != o.w_[i]) return w_[i] < o.w_[i] ? -1 : 1;
    return 0;
  }
  // Returns true if the value is below 2^128 (and stores it in `out`).
  [[nodiscard]] bool fits_u128(u128& out) const {
    for (std::size_t i = 2; i < w_.size(); ++i)
      if (w_[i] != 0) return false;
    out = (static_cast<u128>(w_[1]) << 64) | w_[0];
    return true;
  }
  // Returns ceil(*this / d) for 0 < d < 2^127, saturated at `cap`: binary long division.
  [[nodiscard]] u128 ceil_div(u128 d, u128 cap) const {
    u128 q = 0;
    u128 r = 0;
    bool saturated = false;
    for (std::size_t i = w_.size() * 64; i-- > 0;) {
      r = (r << 1) | ((w_[i / 64] >> (i % 64)) & 1u);
      const bool bit = r >= d;
      if (bit) r -= d;
      if (q > (cap >> 1)) saturated = true;
      q = (q << 1) | (bit ? 1u : 0u);
    }
    if (r != 0) ++q;
    return saturated || q > cap ? cap : q;
  }

 private:
  std::array<std::uint64_t, 6> w_{};
};

// Compares x * 10^ex with y * 10^ey for x, y >= 1 (each a product below 2^190 as built).
int compare_scaled(wide x, int ex, wide y, int ey) {
  const int shift = ex - ey;
  // A product of at most 2^190 is below 10^58: a larger power of ten decides alone.
  if (shift >= 58) return 1;
  if (shift <= -58) return -1;
  if (shift > 0) x.mul_pow10(shift);
  if (shift < 0) y.mul_pow10(-shift);
  return x.compare(y);
}

}  // namespace

result<decimal_weight> make_decimal_weight(double w, std::string_view node) {
  if (std::isnan(w) || !std::isfinite(w) || w < 0)
    return make_error(errc::invalid_argument, "node '{}': fair weight {} must be finite and >= 0",
                      node, w);
  decimal_weight out;
  out.value = w;
  if (w == 0) {
    out.digits = 0;
    out.exponent = 0;
    return out;
  }
  // The shortest scientific form that reads back as w: "d.ddddde[+-]xx", at most 17 digits.
  std::array<char, 64> buf{};
  const auto r =
      std::to_chars(buf.data(), buf.data() + buf.size(), w, std::chars_format::scientific);
  std::uint64_t digits = 0;
  int fraction_digits = 0;
  bool after_point = false;
  const char* p = buf.data();
  for (; p != r.ptr && *p != 'e'; ++p) {
    if (*p == '.') {
      after_point = true;
      continue;
    }
    digits = digits * 10 + static_cast<std::uint64_t>(*p - '0');
    if (after_point) ++fraction_digits;
  }
  int exponent = 0;
  if (p != r.ptr)
    static_cast<void>(std::from_chars(*(p + 1) == '+' ? p + 2 : p + 1, r.ptr, exponent));
  exponent -= fraction_digits;
  while (digits % 10 == 0) {
    digits /= 10;
    ++exponent;
  }
  out.digits = digits;
  out.exponent = exponent;
  return out;
}

drs_value dominant_resource_share(const capacity_tree& tree, const capacity_usage& usage,
                                  queue_id n) {
  drs_value best;
  const queue_id p = tree.parent(n);
  if (!p.valid()) return best;
  const std::size_t nf = tree.fr_count();
  for (const auto& [name, frs] : tree.resources_by_name()) {
    std::int64_t borrowed = 0;
    std::int64_t lendable = 0;
    for (const std::uint32_t f : frs) {
      borrowed += std::max<std::int64_t>(0, usage[n.value() * nf + f] - tree.subtree_quota(n, f));
      lendable += tree.potential_available(p, f);
    }
    if (lendable <= 0 || borrowed <= 0) continue;
    if (best.borrowed == 0 ||
        compare_fraction(static_cast<u128>(borrowed), static_cast<u128>(lendable),
                         static_cast<u128>(best.borrowed), static_cast<u128>(best.lendable)) > 0) {
      best.borrowed = borrowed;
      best.lendable = lendable;
      best.dominant = name;
    }
  }
  if (best.borrowed > 0) {
    best.weight = tree.weight(n);
    best.infinite = tree.zero_weight(n);
  }
  return best;
}

std::int64_t drs_value::rounded() const noexcept {
  constexpr auto cap = static_cast<u128>(std::numeric_limits<std::int64_t>::max());
  if (infinite) return std::numeric_limits<std::int64_t>::max();
  if (borrowed == 0) return 0;
  // ceil(borrowed * 1000 / (lendable * digits * 10^exponent)).
  if (weight.exponent >= 0) {
    const u128 num = static_cast<u128>(borrowed) * 1000u;
    if (weight.exponent >= 58) return 1;  // the denominator is above 2^190 > num
    wide den(static_cast<std::uint64_t>(lendable));
    den.mul(weight.digits);
    den.mul_pow10(weight.exponent);
    u128 d = 0;
    if (!den.fits_u128(d) || d >= num) return 1;
    return static_cast<std::int64_t>((num + d - 1) / d);
  }
  // A numerator of at least 10^58 is above 2^192 > lendable * digits * cap.
  if (-weight.exponent >= 58) return std::numeric_limits<std::int64_t>::max();
  wide num(static_cast<std::uint64_t>(borrowed));
  num.mul(1000);
  num.mul_pow10(-weight.exponent);
  const u128 den = static_cast<u128>(lendable) * weight.digits;
  return static_cast<std::int64_t>(num.ceil_div(den, cap));
}

double drs_value::to_double() const noexcept {
  if (infinite) return std::numeric_limits<double>::infinity();
  if (borrowed == 0) return 0;
  return static_cast<double>(borrowed) * 1000.0 / (static_cast<double>(lendable) * weight.value);
}

std::strong_ordering operator<=>(const drs_value& a, const drs_value& b) noexcept {
  if (a.infinite != b.infinite)
    return a.infinite ? std::strong_ordering::greater : std::strong_ordering::less;
  if (a.borrowed == 0 || b.borrowed == 0) return (a.borrowed > 0) <=> (b.borrowed > 0);
  int c = 0;
  if (a.infinite ||
      (a.weight.digits == b.weight.digits && a.weight.exponent == b.weight.exponent)) {
    // Equal weights (the common case) or both infinite (by the unweighted ratio): one
    // cross-multiplication of the ratios borrowed / lendable.
    c = compare_fraction(static_cast<u128>(a.borrowed), static_cast<u128>(a.lendable),
                         static_cast<u128>(b.borrowed), static_cast<u128>(b.lendable));
  } else {
    // borrowed_a / (lendable_a * W_a) vs borrowed_b / (lendable_b * W_b), W = digits * 10^exp:
    // borrowed_a * lendable_b * digits_b * 10^exp_b vs borrowed_b * lendable_a * digits_a *
    // 10^exp_a.
    wide x(static_cast<std::uint64_t>(a.borrowed));
    x.mul(static_cast<std::uint64_t>(b.lendable));
    x.mul(b.weight.digits);
    wide y(static_cast<std::uint64_t>(b.borrowed));
    y.mul(static_cast<std::uint64_t>(a.lendable));
    y.mul(a.weight.digits);
    c = compare_scaled(x, b.weight.exponent, y, a.weight.exponent);
  }
  return c < 0 ? std::strong_ordering::less
               : (c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal);
}

}  // namespace hetsched
