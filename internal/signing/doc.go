// Package signing is cosign's signature format for stack artifacts,
// without the registry: the keys (a PKCS#8 or SEC 1 PEM ECDSA P-256 private
// key as openssl writes it, cosign's "ENCRYPTED SIGSTORE PRIVATE KEY" with
// its password, PKIX "PUBLIC KEY" PEM public keys), the "simple signing"
// payload that names a manifest digest, and the ECDSA-SHA256 signature
// over it. internal/stack/artifact stores and reads the signatures in a
// registry as cosign does (the tag sha256-<hex>.sig).
//
// Only ECDSA P-256 keys are accepted: what `cosign generate-key-pair`
// makes and what `openssl genpkey -algorithm EC -pkeyopt
// ec_paramgen_curve:P-256` writes.
package signing
