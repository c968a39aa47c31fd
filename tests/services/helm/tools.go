//go:build tools

// Package tools pins the helm program for tests/services/kapi.sh.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
