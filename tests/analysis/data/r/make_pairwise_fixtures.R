# R's answers for the decision table's tests that do not assume equal variances (issue #25):
# Games-Howell (rstatix::games_howell_test) and estimated marginal means with Welch standard
# errors (emmeans on nlme::gls with one variance per cell; emmeans on lm with the cell-variance
# sandwich for the additive model). Inputs: ../pairwise_groups.csv, ../emm_*.csv, made by
# ../make_pairwise_inputs.py. Run from this directory:  Rscript make_pairwise_fixtures.R
# Full precision (jsonlite digits = NA); every file records the R and package versions.
#
# The df convention. emmeans' "satterthwaite" df for a gls fit differentiates the gls variance
# parameters' covariance (nlme's apVar, a finite-difference Hessian), so it moves with nlme's
# .relStep and tolerances (for a1 of emm_unequal.csv: 3.6 to 8.5, where the closed form gives
# 6.13) and falls back to the residual df (322) when the Hessian fails (.relStep = 1e-6); it is
# a numerical approximation of Satterthwaite's. The reference df here is
# Welch-Satterthwaite's closed form (Welch 1947, Satterthwaite 1946), the one
# rstatix::games_howell_test and t.test(var.equal = FALSE) use, computed below from the cells'
# variances; emmeans' own df and p are kept in the files for the record.
suppressPackageStartupMessages({ library(jsonlite); library(nlme); library(emmeans); library(rstatix) })
options(contrasts = c("contr.sum", "contr.poly"))

versions <- list(r_version = R.version.string,
                 car_version = as.character(packageVersion("car")),
                 emmeans_version = as.character(packageVersion("emmeans")),
                 nlme_version = as.character(packageVersion("nlme")),
                 rstatix_version = as.character(packageVersion("rstatix")))

save <- function(x, name) {
  write_json(c(versions, x), name, digits = NA, auto_unbox = TRUE, pretty = TRUE, na = "null")
}

# Welch-Satterthwaite df of sum_c a_c ybar_c from the cells' variances and counts
ws_df <- function(a, s2, n) {
  u <- a^2 * s2 / n
  u <- u[a != 0]
  nn <- n[a != 0]
  sum(u)^2 / sum(u^2 / (nn - 1))
}

# --- Games-Howell ----------------------------------------------------------------------------
gr <- read.csv("../pairwise_groups.csv", stringsAsFactors = FALSE)
gr$g <- factor(gr$g)
gh <- games_howell_test(gr, y ~ g, conf.level = 0.95, detailed = TRUE)
k <- nlevels(gr$g)
gh_rows <- data.frame(group1 = gh$group1, group2 = gh$group2, estimate = gh$estimate,
                      conf_low = gh$conf.low, conf_high = gh$conf.high, se = gh$se, statistic = gh$statistic,
                      df = gh$df, p_adj_rounded = gh$p.adj,
                      # rstatix rounds p.adj to 3 digits; the same p from its statistic and df:
                      p_adj = ptukey(gh$statistic * sqrt(2), k, gh$df, lower.tail = FALSE),
                      stringsAsFactors = FALSE)
# two groups: Games-Howell is Welch's t-test
two <- droplevels(gr[gr$g %in% c("a", "d"), ])
tt <- t.test(y ~ g, data = two, var.equal = FALSE)
gh2 <- games_howell_test(two, y ~ g, detailed = TRUE)
save(list(call = "rstatix::games_howell_test(y ~ g, detailed = TRUE); t.test(var.equal = FALSE) on a vs d",
          games_howell = gh_rows,
          two_groups = list(estimate = gh2$estimate, conf_low = gh2$conf.low, conf_high = gh2$conf.high,
                            df = gh2$df, p_adj = ptukey(gh2$statistic * sqrt(2), 2, gh2$df, lower.tail = FALSE),
                            welch_t = unname(tt$statistic), welch_df = unname(tt$parameter), welch_p = tt$p.value,
                            welch_ci = unname(tt$conf.int))),
     "pairwise_groups.json")

# --- EMMs with Welch standard errors: emmeans with the cell-variance sandwich -----------------
# emmeans on lm(formula) with vcov. = (X'X)^-1 X' diag(s2 of each row's cell) X (X'X)^-1, the
# exact covariance of the least-squares estimates when the cells' variances differ (for the full
# model: Var(cell mean) = s2 / n). Each EMM and each contrast is a linear function of the cell
# means (emmeans' linfct times (X'X)^-1 X', summed over each cell's rows), whose weights give the
# Welch-Satterthwaite df; p and the simultaneous interval from ptukey / qtukey with k = levels.
emm_sandwich <- function(d, formula) {
  d$cell <- droplevels(interaction(d$A, d$B))
  fit <- lm(formula, data = d)
  X <- model.matrix(fit)
  s2 <- tapply(d$y, d$cell, var); n <- tapply(d$y, d$cell, length)
  XtXi <- solve(crossprod(X))
  V <- XtXi %*% crossprod(X, X * as.vector(s2[as.character(d$cell)])) %*% XtXi
  em <- emmeans(fit, ~ A, vcov. = V)
  es <- as.data.frame(summary(em))
  rowW <- em@linfct %*% XtXi %*% t(X)                                          # levels x rows
  cells <- levels(d$cell)
  W <- sapply(cells, function(cl) rowSums(rowW[, d$cell == cl, drop = FALSE]))  # levels x cells
  k <- nlevels(d$A); lv <- levels(d$A)
  emms <- lapply(seq_len(k), function(i) {
    dfw <- ws_df(W[i, ], s2[cells], n[cells])
    h <- qt(0.975, dfw) * es$SE[i]
    list(level = lv[i], emmean = es$emmean[i], se = es$SE[i], df = dfw, lower = es$emmean[i] - h,
         upper = es$emmean[i] + h, weights = as.list(setNames(W[i, ], cells)))
  })
  pr <- as.data.frame(summary(pairs(em, adjust = "none")))
  pairs_ref <- list()
  r <- 0
  for (i in seq_len(k - 1)) for (j in (i + 1):k) {
    r <- r + 1                       # pairs() runs 1-2, 1-3, ..., 2-3, ...: level i - level j
    est <- -pr$estimate[r]           # faascope: group2 - group1
    dfw <- ws_df(W[j, ] - W[i, ], s2[cells], n[cells])
    tw <- est / pr$SE[r]
    q <- qtukey(0.95, k, dfw) / sqrt(2)
    pairs_ref[[r]] <- list(group1 = lv[i], group2 = lv[j], diff = est, se = pr$SE[r], df = dfw, t = tw,
                           p_adj = ptukey(abs(tw) * sqrt(2), k, dfw, lower.tail = FALSE),
                           lower = est - q * pr$SE[r], upper = est + q * pr$SE[r])
  }
  list(emms = emms, pairs = pairs_ref, raw_means = as.list(tapply(d$y, d$A, mean)))
}

# The same EMMs from nlme::gls with one variance per cell (REML; for the saturated model its
# variances are the cells' s2 up to the optimiser's tolerance), as emmeans reports them with its
# own "satterthwaite" df, and emmeans' "tukey" adjustment shown to be ptukey(|t| sqrt 2, k, df).
gls_route <- function(d) {
  d$cell <- interaction(d$A, d$B)
  fit <- gls(y ~ A * B, data = d, weights = varIdent(form = ~ 1 | cell),
             control = glsControl(tolerance = 1e-12, msTol = 1e-12))
  em <- emmeans(fit, ~ A, mode = "satterthwaite", data = d)
  es <- as.data.frame(summary(em))
  pr <- as.data.frame(summary(pairs(em, adjust = "tukey")))
  stopifnot(isTRUE(all.equal(pr$p.value, ptukey(abs(pr$t.ratio) * sqrt(2), nlevels(d$A), pr$df,
                                                lower.tail = FALSE))))
  list(emms = lapply(seq_len(nrow(es)), function(i) list(level = as.character(es$A[i]), emmean = es$emmean[i],
                                                         se = es$SE[i], df = es$df[i])),
       pairs = lapply(seq_len(nrow(pr)), function(r) list(contrast = as.character(pr$contrast[r]),
                                                          estimate = pr$estimate[r], se = pr$SE[r],
                                                          df = pr$df[r], p_adj = pr$p.value[r])))
}

full <- function(file, y, a, b) {
  d <- read.csv(file.path("..", file), stringsAsFactors = FALSE)
  d <- data.frame(y = d[[y]], A = factor(d[[a]]), B = factor(d[[b]]))
  c(list(call = paste0("emmeans(lm(", y, " ~ A * B), ~ A, vcov. = cell-variance sandwich); pairs(); ",
                       "df: Welch-Satterthwaite; gls: emmeans(gls(", y, " ~ A * B, weights = ",
                       "varIdent(form = ~ 1 | cell)), ~ A, mode = \"satterthwaite\"); pairs(adjust = \"tukey\")")),
    emm_sandwich(d, y ~ A * B), list(gls = gls_route(d)))
}
save(full("emm_unequal.csv", "y", "A", "B"), "emm_unequal.json")
save(full("emm_issue.csv", "latency_seconds", "io_size", "platform"), "emm_issue.json")

# --- EMMs of the additive model on a design with an empty cell (emmeans predicts it) ----------
d <- read.csv("../emm_additive_empty.csv", stringsAsFactors = FALSE)
d$A <- factor(d$A); d$B <- factor(d$B)
save(c(list(call = paste0("emmeans(lm(y ~ A + B), ~ A, vcov. = cell-variance sandwich); pairs(); ",
                          "df: Welch-Satterthwaite of the cell weights")),
       emm_sandwich(d, y ~ A + B)),
     "emm_additive_empty.json")
