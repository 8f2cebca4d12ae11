# R's comparison of ../compare_base.csv and ../compare_new.csv (made by ../make_compare_inputs.py),
# the independent check of `faascope compare` (tests/compare/test_compare.py).
# Run from this directory:  Rscript make_compare_fixtures.R
# Per cell (memory x op): Welch's t.test(new, base) (difference of means, its 95% CI, t, df,
# p-value), Holm's p.adjust over the cells, medians, CV = sd / mean, the 99th percentile
# (quantile type 7). Full precision (jsonlite digits = NA); the file records the R and car versions
# (car is not used here; every file in this directory names both, as make_fixtures.R's do).
suppressPackageStartupMessages(library(jsonlite))

base <- read.csv(file.path("..", "compare_base.csv"), stringsAsFactors = FALSE)
new <- read.csv(file.path("..", "compare_new.csv"), stringsAsFactors = FALSE)
cells <- unique(base[, c("memory", "op")])
cells <- cells[order(as.character(cells$memory), cells$op), ]

rows <- list()
for (i in seq_len(nrow(cells))) {
  m <- cells$memory[i]; o <- cells$op[i]
  b <- base$latency_seconds[base$memory == m & base$op == o]
  n <- new$latency_seconds[new$memory == m & new$op == o]
  tt <- t.test(n, b, var.equal = FALSE, conf.level = 0.95)
  rows[[i]] <- list(memory = as.character(m), op = o, n_base = length(b), n_new = length(n),
                    mean_diff = mean(n) - mean(b), ci_low = tt$conf.int[1], ci_high = tt$conf.int[2],
                    t = unname(tt$statistic), df = unname(tt$parameter), p = tt$p.value,
                    median_base = median(b), median_new = median(n),
                    cv_base = sd(b) / mean(b), cv_new = sd(n) / mean(n),
                    p99_base = unname(quantile(b, 0.99, type = 7)),
                    p99_new = unname(quantile(n, 0.99, type = 7)))
}
p_holm <- p.adjust(sapply(rows, function(r) r$p), method = "holm")
for (i in seq_along(rows)) rows[[i]]$p_holm <- p_holm[i]

write_json(list(r_version = R.version.string, car_version = as.character(packageVersion("car")),
                cells = rows), "compare.json",
           digits = NA, auto_unbox = TRUE, pretty = TRUE)
