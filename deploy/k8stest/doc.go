// Package k8stest checks the Kubernetes manifests in examples/kubernetes against the
// real Kubernetes API types and the Pod Security admission policy. It is a module of
// its own, so that k8s.io/api and its dependencies stay out of agentrun's module:
//
//	cd deploy/k8stest && go test ./...
package k8stest
