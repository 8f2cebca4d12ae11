package lambdaapi

import "net/http"

// GetAccountSettings' handler (account.go of the core).

func (a *api) getAccountSettings(*http.ResponseController, *http.Request) (response, error) {
	limit, usage := a.p.AccountSettings()
	return jsonResponse(http.StatusOK, map[string]any{"AccountLimit": limit, "AccountUsage": usage}), nil
}
