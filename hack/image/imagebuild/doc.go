// Package imagebuild builds convoy's container image without a container
// engine: it cross-compiles a static convoy binary per platform, assembles
// a minimal base (a CA bundle, /etc/passwd and /etc/group with the
// non-root user 65532, a world-writable /tmp) in Go, and pushes an OCI
// image index of one image per platform with go-containerregistry.
//
// Everything that goes into a layer or a config has a fixed time (the
// commit's, SOURCE_DATE_EPOCH in the Makefile), fixed owners and a fixed
// order, so that the same binaries give the same digests: the index digest
// of a commit only changes when its binaries do.
//
// `make image` runs hack/image, the command over this package; its tests
// call the same functions.
package imagebuild
