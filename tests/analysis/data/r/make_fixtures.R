# R's answers for the data sets in tests/analysis/data/ (made by ../make_inputs.py).
# Run from this directory:  Rscript make_fixtures.R
# Each output file records the R and car versions that made it; the tests read the files and
# never need R. Numbers are written with full precision (jsonlite digits = NA).
suppressPackageStartupMessages({ library(car); library(jsonlite) })
options(contrasts = c("contr.sum", "contr.poly"))  # car::Anova type 3 needs sum-to-zero contrasts

versions <- list(r_version = R.version.string, car_version = as.character(packageVersion("car")))

save <- function(x, name) {
  write_json(c(versions, x), name, digits = NA, auto_unbox = TRUE, pretty = TRUE, na = "null")
}

read_in <- function(name, ...) {
  d <- read.csv(file.path("..", name), stringsAsFactors = FALSE, ...)
  for (f in intersect(names(d), c("A", "B", "C", "D", "platform"))) d[[f]] <- factor(d[[f]])
  d
}

# capture warnings instead of printing them
quietly <- function(expr) {
  w <- character()
  val <- withCallingHandlers(expr, warning = function(c) { w <<- c(w, conditionMessage(c)); invokeRestart("muffleWarning") })
  list(value = val, warnings = w)
}

anova_table <- function(tab) {
  tab <- as.data.frame(tab)
  keep <- rownames(tab) != "(Intercept)"
  tab <- tab[keep, , drop = FALSE]
  ss <- if ("Sum Sq" %in% names(tab)) tab[["Sum Sq"]] else tab[["Sum of Sq"]]
  data.frame(source = trimws(rownames(tab)), df = tab[["Df"]], sum_sq = ss,
             F = tab[["F value"]], p_value = tab[["Pr(>F)"]], stringsAsFactors = FALSE)
}

tukey_table <- function(tk) {
  out <- list()
  for (term in names(tk)) {
    m <- tk[[term]]
    out[[length(out) + 1]] <- data.frame(term = term, comparison = rownames(m), diff = m[, "diff"],
                                         lwr = m[, "lwr"], upr = m[, "upr"], p_adj = m[, "p adj"],
                                         stringsAsFactors = FALSE)
  }
  do.call(rbind, out)
}

three_types <- function(formula, d) {
  fit <- lm(formula, data = d)
  t1 <- quietly(anova(fit))
  list(type1 = anova_table(t1$value), type1_warnings = t1$warnings,
       type2 = anova_table(Anova(fit, type = 2)),
       type3 = anova_table(Anova(fit, type = 3)))
}

# --- four factors, unbalanced: Type I/II/III, term order, Tukey with interactions -------------
ff <- read_in("four_factor.csv")
f4 <- y ~ A * B * C * D
save(c(list(call = "anova(lm(y ~ A*B*C*D)); car::Anova(type = 2, 3); TukeyHSD(aov(y ~ A*B*C*D))",
            term_labels = attr(terms(f4), "term.labels")),
       three_types(f4, ff),
       list(tukey = tukey_table(TukeyHSD(aov(f4, data = ff))))),
     "four_factor.json")

# the same data from a semicolon CSV with decimal commas, as read.csv2 reads it
sc <- read.csv2("../four_factor_semicolon.csv", stringsAsFactors = TRUE)
save(list(call = "read.csv2(); anova(lm(y ~ A*B*C*D))", n = nrow(sc), sum_y = sum(sc$y),
          type1 = anova_table(anova(lm(f4, data = sc)))),
     "four_factor_semicolon.json")

# --- degenerate responses ---------------------------------------------------------------------
degenerate <- function(name) {
  d <- read_in(name)
  fit <- lm(y ~ A * B, data = d)
  r <- quietly(anova(fit))
  s <- quietly(summary(fit))
  list(call = "anova(lm(y ~ A * B)); summary(lm(y ~ A * B))", sst = sum((d$y - mean(d$y))^2),
       anova = anova_table(r$value), warnings = unique(c(r$warnings, s$warnings)))
}
save(degenerate("constant.csv"), "constant.json")
save(degenerate("all_zero.csv"), "all_zero.json")
save(degenerate("perfect_fit.csv"), "perfect_fit.json")

az <- read_in("all_zero_cell.csv")
save(list(call = "anova(lm(y ~ A * B)); TukeyHSD(aov(y ~ A * B))",
          type1 = anova_table(anova(lm(y ~ A * B, data = az))),
          tukey = tukey_table(TukeyHSD(aov(y ~ A * B, data = az)))),
     "all_zero_cell.json")

# --- a 1.7e15 offset: R on the raw numbers, and exactly (R on y - 1.7e15: integers, exact) ---
off <- read_in("offset.csv", colClasses = c(t_ns = "numeric"))
off$y <- off$t_ns
off$yc <- off$t_ns - 1.7e15
save(c(list(call = "lm(t_ns - 1.7e15 ~ A*B*C): exact (the shifted values are small integers)",
            raw = three_types(y ~ A * B * C, off)),
       three_types(yc ~ A * B * C, off),
       list(tukey = tukey_table(TukeyHSD(aov(yc ~ A * B * C, data = off))))),
     "offset.json")

# --- filters: numeric on a column with blanks, a date bound on a timestamp column ----------------
fl <- read.csv("../filters.csv", stringsAsFactors = FALSE, colClasses = "character")
fl$latency_seconds <- as.numeric(fl$latency_seconds)
fl$platform <- factor(fl$platform)
size <- suppressWarnings(as.numeric(fl$file_size_bytes))
day <- as.Date(substr(fl$occurred_at, 1, 10))
ts <- as.POSIXct(fl$occurred_at, format = "%Y-%m-%dT%H:%M:%SZ", tz = "UTC")
sub_size <- fl[!is.na(size) & size < 5000, ]
sub_day <- fl[day <= as.Date("2024-05-05"), ]
save(list(call = "subset(file_size_bytes < 5000, blanks are NA); subset(as.Date(occurred_at) <= 2024-05-05); anova(lm(latency_seconds ~ platform))",
          n_size_lt_5000 = nrow(sub_size),
          size_lt_5000 = anova_table(anova(lm(latency_seconds ~ platform, data = sub_size))),
          n_day_le_0505 = nrow(sub_day),
          n_before_0506 = sum(ts < as.POSIXct("2024-05-06", tz = "UTC")),
          n_day_gt_0505 = sum(day > as.Date("2024-05-05")),
          n_day_ge_0505 = sum(day >= as.Date("2024-05-05")),
          n_day_lt_0505 = sum(day < as.Date("2024-05-05")),
          n_time_le = sum(ts <= as.POSIXct("2024-05-05 06:00:00", tz = "UTC")),
          day_le_0505 = anova_table(anova(lm(latency_seconds ~ platform, data = sub_day)))),
     "filters.json")

# --- additive models: one row per cell, and empty cells ----------------------------------------
additive <- function(name) {
  d <- read_in(name)
  fit <- aov(y ~ A + B, data = d)
  list(call = "anova(lm(y ~ A + B)); car::Anova(type = 2, 3); TukeyHSD(aov(y ~ A + B))",
       type1 = anova_table(anova(lm(y ~ A + B, data = d))),
       type2 = anova_table(Anova(lm(y ~ A + B, data = d), type = 2)),
       type3 = anova_table(Anova(lm(y ~ A + B, data = d), type = 3)),
       tukey = tukey_table(TukeyHSD(fit)))
}
save(additive("additive_n1.csv"), "additive_n1.json")
save(additive("additive_empty.csv"), "additive_empty.json")

# --- two rows per cell: what the checks give (documentation; faascope skips them) -------------
tp <- read_in("two_per_cell.csv")
lv <- quietly(leveneTest(y ~ A * B, data = tp, center = median))
save(list(call = "car::leveneTest(y ~ A * B, center = median)",
          brown_forsythe_F = lv$value[["F value"]][1], brown_forsythe_p = lv$value[["Pr(>F)"]][1],
          warnings = lv$warnings,
          shapiro_needs = "shapiro.test: sample size must be between 3 and 5000"),
     "two_per_cell.json")
