package platform

import "time"

// What an invocation's REPORT line bills (Billed Duration), by Lambda's rule:
//
//   - the duration is rounded up to the next millisecond (billingGranularity);
//   - a cold invocation's INIT phase (the REPORT line's Init Duration) is billed with it
//     (billsInit): Billed Duration = ceil(Init Duration + Duration). Lambda has always billed the
//     INIT phase of custom runtimes (provided.*) and of
//     container images, and since 1 August 2025 that of every on-demand function, ZIP packages
//     on managed runtimes included ("AWS Lambda standardizes billing for INIT Phase", AWS Compute
//     Blog, 29 April 2025, https://aws.amazon.com/blogs/compute/aws-lambda-standardizes-billing-for-init-phase/).
//
// The rule's one source is the price table faascope's cost model reads
// (src/faascope/cost/tables/aws_lambda@<newest>.json: prices.init_billed, prices.granularity_ms);
// TestBillingRuleIsThePriceTables fails when these constants and the table disagree.
const (
	billsInit          = true
	billingGranularity = time.Millisecond
)

// billedMs is the Billed Duration, in whole milliseconds, of an invocation that ran for dur
// after an INIT phase of init (0 when warm).
func billedMs(init, dur time.Duration) int64 {
	total := dur
	if billsInit {
		total += init
	}
	if total <= 0 {
		return 0
	}
	// per started millisecond: ceil on the exact nanoseconds, no float rounding
	return int64((total + billingGranularity - 1) / billingGranularity)
}
