# R's answers for the CV test behind the predictability decisions (issue #25;
# src/faascope/analysis/cv_test.py): a studentized permutation test of the CV ratio on values
# scaled by their cell's median, re-allocated within strata.
#
# R has no packaged version of this test, so this script computes it independently: the
# skewness and kurtosis from e1071 (type 1: the moment estimators g1 and b2), the delta-method
# variance of each CV, the statistic, and the *exact* permutation p-value by enumerating every
# re-allocation (combn within each stratum, every combination of strata), on samples small enough
# to enumerate. faascope draws B random re-allocations, so its p-value must agree within its
# Monte-Carlo error. Also R's p.adjust(p, "holm") over a family of three levels, and, for the
# simulation's contrast (tests of spread on the log scale that were not chosen),
# car::leveneTest(center = median) and fligner.test on the log values.
#
# Run from this directory:  Rscript make_cv_test_fixtures.R
# Full precision (jsonlite digits = NA); the file records the R and package versions.
suppressPackageStartupMessages({ library(jsonlite); library(e1071); library(car) })

versions <- list(r_version = R.version.string,
                 e1071_version = as.character(packageVersion("e1071")),
                 car_version = as.character(packageVersion("car")))

# CV of a cell and the delta-method variance of its estimate (no normality):
# (cv^4 - cv^3 g1 + cv^2 (b2 - 1) / 4) / n
cell_moments <- function(x) {
  n <- length(x)
  cv <- sd(x) / mean(x)
  g1 <- skewness(x, type = 1)
  b2 <- kurtosis(x, type = 1) + 3
  c(cv = cv, var = max((cv^4 - cv^3 * g1 + cv^2 * (b2 - 1) / 4) / n, 0))
}

# T = (log CV_b - log CV_a) / sqrt(Var_a / CV_a^2 + Var_b / CV_b^2), a level's CV the mean of
# its cells', its variance the sum of theirs over the number of cells squared
stat_T <- function(cells_a, cells_b) {
  ma <- sapply(cells_a, cell_moments)
  mb <- sapply(cells_b, cell_moments)
  ca <- mean(ma["cv", ]); va <- sum(ma["var", ]) / ncol(ma)^2
  cb <- mean(mb["cv", ]); vb <- sum(mb["var", ]) / ncol(mb)^2
  (log(cb) - log(ca)) / sqrt(va / ca^2 + vb / cb^2)
}

# every re-allocation of each stratum's scaled values (stratum s: cells a[s] and b[s]); the
# exact p-value is the share of re-allocations, the observed one included, with |T*| >= |T|
exact_p <- function(cells, a, b) {
  z <- lapply(cells, function(x) x / median(x))
  t0 <- stat_T(z[a], z[b])
  splits <- lapply(seq_along(a), function(s) {
    pooled <- c(z[[a[s]]], z[[b[s]]])
    idx <- combn(length(pooled), length(z[[a[s]]]))
    lapply(seq_len(ncol(idx)), function(j) list(pooled[idx[, j]], pooled[-idx[, j]]))
  })
  grid <- expand.grid(lapply(splits, seq_along))
  tp <- apply(grid, 1, function(k) {
    za <- lapply(seq_along(a), function(s) splits[[s]][[k[s]]][[1]])
    zb <- lapply(seq_along(a), function(s) splits[[s]][[k[s]]][[2]])
    stat_T(za, zb)
  })
  list(statistic = t0, p_exact = mean(abs(tp) >= abs(t0) * (1 - 1e-12)), n_splits = length(tp))
}

set.seed(20250)
cold <- function(n, k = 8) { w <- rlnorm(n, 0, 0.25); w[sample(n, 1)] <- k * w[1]; w }
cases <- list(
  # one stratum: a tight cell against one three times slower and twice as spread
  list(name = "lognormal, unequal n", cells = list(rlnorm(7, 0, 0.1), 3 * rlnorm(6, 0, 0.3)),
       a = 1, b = 2),
  # one stratum, a large difference: p near its smallest
  list(name = "lognormal, large difference", cells = list(rlnorm(8, 0, 0.05), 3 * rlnorm(8, 0, 0.6)),
       a = 1, b = 2),
  # one stratum, equal shapes (the null): p should be large
  list(name = "gamma, equal CV", cells = list(rgamma(8, 25, 25), 5 * rgamma(8, 25, 25)), a = 1, b = 2),
  # one cold start at 8x in the first cell
  list(name = "cold start", cells = list(cold(7), 2 * rlnorm(7, 0, 0.25)), a = 1, b = 2),
  # two strata (the "all" row): cells 1, 2 of level a; 3, 4 of level b; strata (1, 3), (2, 4)
  list(name = "two strata", cells = list(rlnorm(5, 0, 0.1), rlnorm(4, 1, 0.15),
                                         2 * rlnorm(5, 0, 0.3), 2 * rlnorm(6, 1, 0.35)),
       a = c(1, 2), b = c(3, 4))
)
# the values as the JSON file holds them (15 significant digits), so that R's results are those
# of the values faascope reads back (a rank test can flip on the 16th digit)
r15 <- function(x) as.numeric(sprintf("%.15g", x))
cases <- lapply(cases, function(cs) { cs$cells <- lapply(cs$cells, r15); cs })
out <- lapply(cases, function(cs) {
  r <- exact_p(cs$cells, cs$a, cs$b)
  list(name = cs$name, cells = cs$cells, cells_a = I(cs$a - 1), cells_b = I(cs$b - 1),
       strata = lapply(seq_along(cs$a), function(s) c(cs$a[s], cs$b[s]) - 1),
       statistic = r$statistic, p_exact = r$p_exact, n_splits = r$n_splits,
       moments = lapply(cs$cells, function(x) as.list(cell_moments(x))))
})

# Holm over a family of three levels (pairs 1-2, 1-3, 2-3)
fam <- lapply(list(rlnorm(6, 0, 0.1), rlnorm(6, 0, 0.2), rlnorm(6, 0, 0.6)), r15)
fam_pairs <- list(c(1, 2), c(1, 3), c(2, 3))
fam_p <- sapply(fam_pairs, function(pq) exact_p(fam, pq[1], pq[2])$p_exact)
holm <- list(cells = fam, pairs = lapply(fam_pairs, function(pq) pq - 1), p_exact = fam_p,
             p_holm = p.adjust(fam_p, "holm"))

# tests of spread on the log scale (the simulation's contrast)
spread <- lapply(cases[1:3], function(cs) {
  y <- log(unlist(cs$cells))
  g <- factor(rep(seq_along(cs$cells), sapply(cs$cells, length)))
  list(name = cs$name, levene_p = leveneTest(y ~ g, center = median)[1, "Pr(>F)"],
       fligner_p = fligner.test(y ~ g)$p.value)
})

write_json(c(versions, list(cases = out, holm = holm, spread = spread)), "cv_test.json",
           digits = NA, auto_unbox = TRUE, pretty = TRUE, na = "null")
