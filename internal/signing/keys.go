package signing

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/secure-systems-lab/go-securesystemslib/encrypted"
)

// PEM block types of the keys read.
const (
	pemPrivateKey        = "PRIVATE KEY"    // PKCS#8 (openssl genpkey)
	pemECPrivateKey      = "EC PRIVATE KEY" // SEC 1 (openssl ecparam -genkey)
	pemEncryptedSigstore = "ENCRYPTED SIGSTORE PRIVATE KEY"
	pemEncryptedCosign   = "ENCRYPTED COSIGN PRIVATE KEY" // cosign's older name
	pemPublicKey         = "PUBLIC KEY"
	pemEncryptedPKCS8    = "ENCRYPTED PRIVATE KEY"
	pemLegacyEncrypted   = "Proc-Type" // the header of RFC 1423 encrypted PEM
)

// ErrPasswordNeeded is returned for an encrypted key without a password.
var ErrPasswordNeeded = errors.New("the key is encrypted: give its password (COSIGN_PASSWORD)")

// PrivateKey is a signing key.
type PrivateKey struct {
	key *ecdsa.PrivateKey
}

// Public is the key's public half.
func (k *PrivateKey) Public() *PublicKey {
	return &PublicKey{key: &k.key.PublicKey}
}

// ParsePrivateKey reads a PEM ECDSA P-256 private key: PKCS#8 ("PRIVATE
// KEY", what openssl genpkey writes), SEC 1 ("EC PRIVATE KEY"), or
// cosign's encrypted key ("ENCRYPTED SIGSTORE PRIVATE KEY": scrypt and
// NaCl secretbox over PKCS#8), which needs password (nil: none given,
// ErrPasswordNeeded). Errors never quote the key.
func ParsePrivateKey(data, password []byte) (*PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("not a PEM private key")
	}
	if _, legacy := block.Headers[pemLegacyEncrypted]; legacy {
		return nil, fmt.Errorf("a legacy encrypted PEM key (Proc-Type header) is not supported: convert it with openssl pkcs8 -topk8 -nocrypt, or use a cosign key")
	}
	var (
		parsed any
		err    error
	)
	switch block.Type {
	case pemPrivateKey:
		parsed, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case pemECPrivateKey:
		parsed, err = x509.ParseECPrivateKey(block.Bytes)
	case pemEncryptedSigstore, pemEncryptedCosign:
		if password == nil {
			return nil, ErrPasswordNeeded
		}
		der, derr := encrypted.Decrypt(block.Bytes, password)
		if derr != nil {
			return nil, fmt.Errorf("decrypt the %s: %w (is COSIGN_PASSWORD right?)", block.Type, derr)
		}
		parsed, err = x509.ParsePKCS8PrivateKey(der)
	case pemEncryptedPKCS8:
		return nil, errors.New("an encrypted PKCS#8 key (ENCRYPTED PRIVATE KEY) is not supported: decrypt it with openssl pkcs8, or use a cosign key (cosign generate-key-pair)")
	default:
		return nil, fmt.Errorf("a PEM %q block is not a private key this reads (PRIVATE KEY, EC PRIVATE KEY, %s)", block.Type, pemEncryptedSigstore)
	}
	if err != nil {
		return nil, fmt.Errorf("the %s: %w", block.Type, err)
	}
	ec, ok := parsed.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("the key is %s, not ECDSA P-256", keyKind(parsed))
	}
	if ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("the key is ECDSA on %s, not P-256", ec.Curve.Params().Name)
	}
	return &PrivateKey{key: ec}, nil
}

// PublicKey is a key signatures are verified with.
type PublicKey struct {
	// Name says where the key came from (a file, a Secret's key).
	Name string
	key  *ecdsa.PublicKey
}

// ParsePublicKeys reads the PEM "PUBLIC KEY" blocks of data (cosign.pub
// holds one; a file may hold several), each an ECDSA P-256 key, named
// name (name#2, … after the first).
func ParsePublicKeys(name string, data []byte) ([]*PublicKey, error) {
	var out []*PublicKey
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		n := name
		if len(out) > 0 {
			n = fmt.Sprintf("%s#%d", name, len(out)+1)
		}
		if block.Type != pemPublicKey {
			return nil, fmt.Errorf("%s: a PEM %q block, want PUBLIC KEY (as cosign.pub)", n, block.Type)
		}
		parsed, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		ec, ok := parsed.(*ecdsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("%s: the key is %s, not ECDSA P-256", n, keyKind(parsed))
		}
		if ec.Curve != elliptic.P256() {
			return nil, fmt.Errorf("%s: the key is ECDSA on %s, not P-256", n, ec.Curve.Params().Name)
		}
		out = append(out, &PublicKey{Name: n, key: ec})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no PEM PUBLIC KEY", name)
	}
	return out, nil
}

// Fingerprint is the SHA-256 of the key's PKIX encoding, shortened: what
// names a key in messages besides its Name.
func (k *PublicKey) Fingerprint() string {
	der, err := x509.MarshalPKIXPublicKey(k.key)
	if err != nil {
		return "?"
	}
	sum := sha256.Sum256(der)
	return "sha256:" + hex.EncodeToString(sum[:6])
}

// PEM is the key as cosign.pub holds it.
func (k *PublicKey) PEM() ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(k.key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPublicKey, Bytes: der}), nil
}

func keyKind(k any) string {
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		return "ECDSA on " + k.Curve.Params().Name
	case *ecdsa.PublicKey:
		return "ECDSA on " + k.Curve.Params().Name
	case ed25519.PrivateKey, ed25519.PublicKey:
		return "Ed25519"
	case *rsa.PrivateKey, *rsa.PublicKey:
		return "RSA"
	default:
		return fmt.Sprintf("%T", k)
	}
}
