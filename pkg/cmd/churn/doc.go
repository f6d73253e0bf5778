// Package churn is kubectl rv churn: its flags, options and wiring to the
// engine pkg/churn.
package churn
