module fedbayes.dev

go 1.24.4

require github.com/gomlx/gomlx v0.26.0

require (
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/gomlx/go-xla v0.1.4 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	golang.org/x/exp v0.0.0-20250819193227-8b4c13bb791b // indirect
	golang.org/x/sys v0.39.0 // indirect
	golang.org/x/term v0.38.0 // indirect
	google.golang.org/protobuf v1.36.10 // indirect
	k8s.io/klog/v2 v2.130.1 // indirect
)
