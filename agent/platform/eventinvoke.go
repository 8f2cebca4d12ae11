package platform

type EventInvokeConfig struct{}
