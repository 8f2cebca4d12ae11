package platform

type ProvisionedConcurrencyConfig struct{}
