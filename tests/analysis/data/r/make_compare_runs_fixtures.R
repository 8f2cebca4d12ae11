# R's between-unit comparisons of the inputs made by ../make_compare_runs_inputs.py, the
# independent check of `faascope compare`'s tests whose unit is a block or a run
# (tests/compare/test_compare_units.py). Run from this directory:
#   Rscript make_compare_runs_fixtures.R
# Per op, with the ratio NEW / BASE of unit means on the log scale:
# - interleaved: each block's mean per side; t.test(log(new), log(base), paired = TRUE) over the
#   blocks holding both (estimate, 95% CI, t, df, p), Holm's p.adjust over the ops;
# - runs: each run's mean; Welch's t.test(log(new), log(base)) over 4 runs a side;
# - drift (A/A): one run a side against the spread s of 3 A/A runs' log means:
#   t = (log new - log base) / (s * sqrt(1/1 + 1/1)), df = 2, two-sided p from pt;
# - drift (BASE's runs): t.test(log(new1), log(base1..3), var.equal = TRUE) (one NEW run);
# - timeline: Student's t (t.test var.equal = TRUE) of every split into two segments of at
#   least 2 of a fixed series of log medians, and the largest |t|.
# Full precision (jsonlite digits = NA); the file records the R and car versions (car is not
# used here; every file in this directory names both).
suppressPackageStartupMessages(library(jsonlite))

d <- file.path("..")
il <- read.csv(file.path(d, "compare_interleaved.csv"), stringsAsFactors = FALSE)
run <- function(name) read.csv(file.path(d, "compare_runs", paste0(name, ".csv")),
                               stringsAsFactors = FALSE)
tres <- function(tt) list(ratio = exp(unname(tt$estimate[1]) - ifelse(length(tt$estimate) > 1,
                                                                   unname(tt$estimate[2]), 0)),
                          ratio_ci = exp(tt$conf.int[1:2]), t = unname(tt$statistic),
                          df = unname(tt$parameter), p = tt$p.value)

interleaved <- list()
for (o in c("read", "write")) {
  x <- il[il$op == o, ]
  bm <- tapply(x$latency_seconds[x$variant == "base"], x$block[x$variant == "base"], mean)
  nm <- tapply(x$latency_seconds[x$variant == "new"], x$block[x$variant == "new"], mean)
  both <- intersect(names(bm), names(nm))
  tt <- t.test(log(nm[both]), log(bm[both]), paired = TRUE)
  interleaved[[o]] <- c(list(op = o, blocks = length(both)), tres(tt))
}
ph <- p.adjust(sapply(interleaved, function(r) r$p), "holm")
for (o in names(interleaved)) interleaved[[o]]$p_holm <- unname(ph[o])

means <- function(names, o) sapply(names, function(n) { r <- run(n); mean(r$latency_seconds[r$op == o]) })
runs <- list(); drift_aa <- list(); drift_base <- list()
for (o in c("read", "write")) {
  b <- means(c("base1", "base2", "base3"), o); n <- means(c("new1", "new2", "new3"), o)
  a <- means(c("aa1", "aa2", "aa3"), o)
  b4 <- means(c("base1", "base2", "base3", "base4"), o)
  n4 <- means(c("new1", "new2", "new3", "new4"), o)
  runs[[o]] <- c(list(op = o), tres(t.test(log(n4), log(b4))))
  s <- sd(log(a)); est <- log(n[1]) - log(b[1]); se <- s * sqrt(2)
  q <- qt(0.975, 2)
  drift_aa[[o]] <- list(op = o, ratio = unname(exp(est)),
                        ratio_ci = unname(exp(c(est - q * se, est + q * se))),
                        t = unname(est / se), df = 2, p = unname(2 * pt(-abs(est / se), 2)),
                        drift_band = c(exp(-q * se) - 1, exp(q * se) - 1))
  drift_base[[o]] <- c(list(op = o), tres(t.test(log(n[1]), log(b), var.equal = TRUE)))
}
for (name in c("runs", "drift_aa", "drift_base")) {
  l <- get(name)
  ph <- p.adjust(sapply(l, function(r) r$p), "holm")
  for (o in names(l)) l[[o]]$p_holm <- unname(ph[o])
  assign(name, l)
}

# a fixed series of 9 inputs' log medians for the maximal t
y <- log(c(0.101, 0.098, 0.104, 0.099, 0.121, 0.118, 0.125, 0.119, 0.122))
ts <- sapply(2:(length(y) - 2), function(j) unname(t.test(y[(j + 1):length(y)], y[1:j],
                                                           var.equal = TRUE)$statistic))
timeline <- list(log_medians = y, splits = 2:(length(y) - 2), t = ts,
                 max_abs_t = max(abs(ts)), split = (2:(length(y) - 2))[which.max(abs(ts))])

write_json(list(r_version = R.version.string, car_version = as.character(packageVersion("car")),
                interleaved = unname(interleaved), runs = unname(runs),
                drift_aa = unname(drift_aa), drift_base = unname(drift_base),
                timeline = timeline),
           "compare_runs.json", digits = NA, auto_unbox = TRUE, pretty = TRUE)
