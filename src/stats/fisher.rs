//! Fisher's exact test on a 2x2 table, two-sided: "did the pass rate change since the baseline?" for
//! the small counts prompt tests have, where a normal approximation (the chi-squared test) is wrong.

use super::Counts;

/// The two-sided p-value of Fisher's exact test for the table `[[a.passed, a.failed], [b.passed,
/// b.failed]]`: the probability, with both margins fixed, of a table at most as likely as this one.
/// It is 1 when a sample is empty or every sample passed (or failed): nothing can have changed.
pub fn two_sided(a: Counts, b: Counts) -> f64 {
    let (n1, n2) = (u64::from(a.total), u64::from(b.total));
    let passes = u64::from(a.passed) + u64::from(b.passed);
    let n = n1 + n2;
    if n1 == 0 || n2 == 0 || passes == 0 || passes == n {
        return 1.0;
    }
    let f = ln_factorial;
    // P(X = x), X the passes in the first sample: hypergeometric.
    let ln_p = |x: u64| {
        f(n1) + f(n2) + f(passes) + f(n - passes)
            - f(n)
            - f(x)
            - f(n1 - x)
            - f(passes - x)
            - f(n2 + x - passes)
    };
    let observed = ln_p(u64::from(a.passed));
    let low = passes.saturating_sub(n2);
    let high = passes.min(n1);
    // Tables as likely as the observed one count too; the relative tolerance is R's `fisher.test`'s
    // (1 + 1e-7), so that rounding does not drop a tie.
    let p: f64 = (low..=high)
        .map(ln_p)
        .filter(|&l| l <= observed + 1e-7)
        .map(f64::exp)
        .sum();
    p.min(1.0)
}

/// Below this, ln k! is a sum of logarithms; from it on, Stirling's series (its error is below 1e-15
/// there). Memory stays constant whatever the counts.
const STIRLING_FROM: u64 = 256;

/// ln k!.
fn ln_factorial(k: u64) -> f64 {
    if k < STIRLING_FROM {
        return (2..=k).map(|i| (i as f64).ln()).sum();
    }
    let x = k as f64;
    let x2 = x * x;
    x * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI * x).ln() + 1.0 / (12.0 * x)
        - 1.0 / (360.0 * x * x2)
        + 1.0 / (1260.0 * x * x2 * x2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(a: u32, b: u32, c: u32, d: u32) -> f64 {
        two_sided(Counts::new(a, a + b), Counts::new(c, c + d))
    }

    #[test]
    fn stirling_s_series_agrees_with_the_sum_of_logarithms() {
        for k in [256_u64, 300, 1000, 5000] {
            let sum: f64 = (2..=k).map(|i| (i as f64).ln()).sum();
            let got = ln_factorial(k);
            assert!((got - sum).abs() <= 1e-9 * sum, "{k}: {got} vs {sum}");
        }
    }

    #[test]
    fn large_counts_take_bounded_memory_and_stay_a_probability() {
        // Once, a table of n samples allocated n floats: 4e9 of them were 32 GB.
        let p = two_sided(
            Counts::new(500_000, 1_000_000),
            Counts::new(499_000, 1_000_000),
        );
        assert!((0.0..=1.0).contains(&p), "{p}");
        assert!(
            p > 0.1,
            "{p}: a 0.1 point difference in a million is not significant"
        );
    }

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-9_f64.max(want * 1e-6)
    }

    // Published values: Fisher's tea-tasting table (R's `?fisher.test`: p-value = 0.4857), the
    // convictions of twins (same page, Fisher 1962: 0.0005367), and Wikipedia's "Fisher's exact test"
    // dieting example (0.002759). The rest are exact rational sums computed for this test with Python's
    // `fractions` and `math.comb` (an independent implementation), to 10 significant digits.
    #[test]
    fn matches_published_and_exact_reference_values() {
        let cases = [
            ((3, 1, 1, 3), 0.4857142857),
            ((2, 10, 15, 3), 0.0005367241191),
            ((1, 9, 11, 3), 0.002759456185),
            ((5, 0, 0, 5), 0.007936507937),
            ((10, 0, 5, 5), 0.03250773994),
            ((20, 0, 12, 8), 0.003276003276),
            ((40, 0, 33, 7), 0.01173762946),
            ((7, 2, 3, 8), 0.06977851869),
            ((5, 0, 3, 2), 0.4444444444),
            ((100, 0, 90, 10), 0.001542052125),
        ];
        for ((a, b, c, d), want) in cases {
            let got = table(a, b, c, d);
            assert!(
                close(got, want),
                "[[{a}, {b}], [{c}, {d}]]: {got} != {want}"
            );
            // Two-sided: the order of the samples does not matter.
            assert!(
                close(table(c, d, a, b), want),
                "swapped [[{a}, {b}], [{c}, {d}]]"
            );
        }
    }

    #[test]
    fn no_difference_or_no_information_gives_one() {
        assert!(close(table(10, 10, 10, 10), 1.0));
        assert_eq!(table(0, 0, 3, 2), 1.0);
        assert_eq!(table(5, 0, 5, 0), 1.0);
        assert_eq!(table(0, 5, 0, 3), 1.0);
        let p = table(4, 1, 3, 2);
        assert!(p > 0.0 && p <= 1.0, "{p}");
    }
}
