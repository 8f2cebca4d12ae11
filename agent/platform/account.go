package platform

import "net/http"

// GetAccountSettings: the platform is one account, and its limits are the ones it enforces.

// maxTotalCodeBytes is Lambda's default code storage quota (75 GB) for all functions' packages
// and all layer versions together; beyond it CreateFunction, UpdateFunctionCode and
// PublishLayerVersion answer CodeStorageExceededException, as Lambda does.
const maxTotalCodeBytes = 75 << 30

// AccountLimit and AccountUsage are GetAccountSettings' shapes.
type AccountLimit struct {
	TotalCodeSize                  int64 `json:"TotalCodeSize"`
	CodeSizeUnzipped               int64 `json:"CodeSizeUnzipped"`
	CodeSizeZipped                 int64 `json:"CodeSizeZipped"`
	ConcurrentExecutions           int   `json:"ConcurrentExecutions"`
	UnreservedConcurrentExecutions int   `json:"UnreservedConcurrentExecutions"`
}

type AccountUsage struct {
	TotalCodeSize int64 `json:"TotalCodeSize"`
	FunctionCount int   `json:"FunctionCount"`
}

// AccountSettings reports the platform's limits and what its functions and layers use.
func (p *Platform) AccountSettings() (AccountLimit, AccountUsage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return AccountLimit{TotalCodeSize: maxTotalCodeBytes, CodeSizeUnzipped: maxUnzippedBytes,
			CodeSizeZipped: maxZippedBytes, ConcurrentExecutions: p.cfg.Concurrency,
			UnreservedConcurrentExecutions: p.cfg.Concurrency - p.reservedTotal(fnKey{})},
		AccountUsage{TotalCodeSize: p.codeStorageUsed(), FunctionCount: len(p.functions)}
}

// codeStorageUsed is the bytes of all packages and of the layer versions not deleted (a deleted
// one kept for the functions still using it counts no more, as on Lambda); the caller holds p.mu.
func (p *Platform) codeStorageUsed() int64 {
	var n int64
	for _, f := range p.functions {
		n += f.Config.CodeSize
		// Every published version counts its package again, even one with $LATEST's code: AWS's
		// TotalCodeSize grows by the package's size at each PublishVersion
		// (test_account_settings_total_code_size*'s recording).
		for _, v := range f.Versions {
			n += v.Config.CodeSize
		}
	}
	for _, versions := range p.layers {
		for _, lv := range versions {
			if !lv.Deleted {
				n += lv.CodeSize
			}
		}
	}
	return n
}

// checkCodeStorage refuses a package of add bytes that replaces one of replaced bytes when the
// total would pass the quota. Callers hold commitMu, so no other package lands meanwhile.
func (p *Platform) checkCodeStorage(add, replaced int64) error {
	p.mu.Lock()
	used := p.codeStorageUsed()
	p.mu.Unlock()
	if used-replaced+add > maxTotalCodeBytes {
		return &apiError{http.StatusBadRequest, "CodeStorageExceededException", "Code storage limit exceeded.", ""}
	}
	return nil
}
