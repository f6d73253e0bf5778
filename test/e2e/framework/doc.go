// Package framework runs kubectl-rv's end-to-end tests against a real
// control plane: etcd, kube-apiserver and kube-controller-manager built from
// the Go module proxy by hack/build-control-plane.sh and started on loopback
// by hack/local-cluster.sh. One control plane serves a whole test run.
//
// The freshly built kubectl-rv is put first on PATH and commands are run
// through kubectl's plugin mechanism (kubectl rv ...), as users run them.
// If the control plane cannot be built or started, Start fails and the run
// fails with it: end-to-end tests never skip themselves.
package framework
