# R's answers for the 2024 study's day-time analysis on tests/analysis/data/thesis_day_time.csv.gz
# (its preliminary_day_time data: a 1 GB write and a cached read about every minute for four days
# on Lambda and Cloud Functions). Run from this directory:  Rscript day_time.R
# The input is the study's preliminary_day_time.csv (see examples/data/thesis-2024/README.md for
# its source), every row unchanged, keeping the columns collected_at, system_name, operation_type,
# latency_seconds, day_of_week, time_of_day and week_period (pandas to_csv, gzip with mtime 0).
# Two-factor ANOVA on time of day (BUSINESS_HOUR / OFF_HOUR) and week period (WEEKDAY / WEEKEND),
# without interaction (weekends have no business hours), per platform and operation; Type I
# (anova) and Type II (car::Anova) sums of squares. The labels are the study's columns; R also
# derives them from collected_at in UTC, as an independent check of faascope's calendar.
suppressPackageStartupMessages({ library(car); library(jsonlite) })
options(contrasts = c("contr.sum", "contr.poly"))

d <- read.csv(gzfile("../thesis_day_time.csv.gz"), stringsAsFactors = FALSE)
d$time_of_day <- factor(d$time_of_day)
d$week_period <- factor(d$week_period)

t <- as.POSIXct(d$collected_at, tz = "UTC", format = "%Y-%m-%d %H:%M:%OS")
wday <- as.integer(format(t, "%u"))          # 1 = Monday … 7 = Sunday
hour <- as.integer(format(t, "%H"))
r_week <- ifelse(wday <= 5, "WEEKDAY", "WEEKEND")
r_business <- ifelse(wday <= 5 & hour >= 9 & hour < 18, "BUSINESS_HOUR", "OFF_HOUR")

table_of <- function(tab) {
  tab <- as.data.frame(tab)
  tab <- tab[rownames(tab) != "(Intercept)", , drop = FALSE]
  ss <- if ("Sum Sq" %in% names(tab)) tab[["Sum Sq"]] else tab[["Sum of Sq"]]
  data.frame(source = trimws(rownames(tab)), df = tab[["Df"]], sum_sq = ss,
             F = tab[["F value"]], p_value = tab[["Pr(>F)"]], stringsAsFactors = FALSE)
}

scenarios <- list()
for (sys in sort(unique(d$system_name))) for (op in sort(unique(d$operation_type))) {
  s <- d[d$system_name == sys & d$operation_type == op, ]
  fit <- lm(latency_seconds ~ time_of_day + week_period, data = s)
  scenarios[[length(scenarios) + 1]] <- list(
    system_name = sys, operation_type = op, n = nrow(s),
    type1 = table_of(anova(fit)), type2 = table_of(Anova(fit, type = 2)))
}

write_json(list(r_version = R.version.string, car_version = as.character(packageVersion("car")),
                call = "per system_name x operation_type: anova(lm(latency_seconds ~ time_of_day + week_period)); car::Anova(type = 2)",
                rows = nrow(d),
                r_labels_equal_study = list(week_period = all(r_week == d$week_period),
                                            time_of_day = all(r_business == d$time_of_day)),
                scenarios = scenarios),
           "day_time.json", digits = NA, auto_unbox = TRUE, pretty = TRUE, na = "null")
