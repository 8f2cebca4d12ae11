# R's check of faascope.analysis.improvement (the staggering improvement and its interval), used
# by tests/analysis/test_improvement.py. Run from this directory:  Rscript make_improvement_fixtures.R
# Per case: one value per burst for the staggered side (cand) and the all-at-once side (base).
# The interval for rho = mean(cand) / mean(base) is Fieller's, found here independently by
# inverting R's own Welch test: the rho >= 0 for which t.test(cand, rho * base) (var.equal =
# FALSE, two-sided) has p-value >= 0.05, its ends found with uniroot. The upper end is Inf when
# even rho -> Inf is not rejected (checked at rho = 1e9); the lower end is 0 when rho = 0 is not
# rejected. Improvement = 100 * (1 - rho). p_less = t.test(cand, base, alternative = "less").
# Full precision (jsonlite digits = NA); the file records the R and car versions (car is not
# used here; every file in this directory names both).
suppressPackageStartupMessages(library(jsonlite))

set.seed(25)
cases <- list(
  typical = list(cand = 0.6 * exp(rnorm(5, 0, 0.2)), base = exp(rnorm(5, 0, 0.2))),
  unequal_n = list(cand = 0.8 * exp(rnorm(4, 0, 0.3)), base = exp(rnorm(7, 0, 0.1))),
  no_change = list(cand = exp(rnorm(6, 0, 0.3)), base = exp(rnorm(6, 0, 0.3))),
  worse = list(cand = 1.5 * exp(rnorm(5, 0, 0.1)), base = exp(rnorm(5, 0, 0.1))),
  lower_zero = list(cand = c(0.05, 2.0, 0.1, 3.5), base = exp(rnorm(4, 0, 0.05))),
  unbounded = list(cand = exp(rnorm(4, 0, 0.1)), base = c(0.05, 4.0, 0.1, 3.0))
)

p_at <- function(cand, base, rho) t.test(cand, rho * base, var.equal = FALSE)$p.value

out <- list()
for (name in names(cases)) {
  cand <- cases[[name]]$cand; base <- cases[[name]]$base
  est <- mean(cand) / mean(base)
  f <- function(rho) p_at(cand, base, rho) - 0.05
  lo <- if (f(0) >= 0) 0 else uniroot(f, c(0, est), tol = 1e-15 * est)$root
  hi <- if (f(1e9) >= 0) Inf else {
    top <- 2 * est
    while (f(top) > 0) top <- 2 * top
    uniroot(f, c(est, top), tol = 1e-15 * est)$root
  }
  out[[name]] <- list(cand = cand, base = base, ratio = est, ratio_low = lo,
                      ratio_high = if (is.finite(hi)) hi else "Inf",
                      improvement_pct = 100 * (1 - est),
                      p_less = t.test(cand, base, var.equal = FALSE, alternative = "less")$p.value)
}

write_json(list(r_version = R.version.string, car_version = as.character(packageVersion("car")),
                cases = out), "improvement.json", digits = NA, auto_unbox = TRUE, pretty = TRUE)
