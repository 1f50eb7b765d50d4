// Package sopstest makes age keys and SOPS-encrypted files for tests,
// with sops' own Go API, as `sops --encrypt --age RECIPIENT` would.
package sopstest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	sopsconfig "github.com/getsops/sops/v3/config"
	sopsdotenv "github.com/getsops/sops/v3/stores/dotenv"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
)

// Key is a fresh age key pair.
type Key struct {
	Identity  string // AGE-SECRET-KEY-1...
	Recipient string // age1...
}

// NewKey generates an age key.
func NewKey(t testing.TB) Key {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return Key{Identity: id.String(), Recipient: id.Recipient().String()}
}

// UseKeys makes sops find these keys (SOPS_AGE_KEY_FILE) for the rest of
// the test, and no others.
func UseKeys(t *testing.T, keys ...Key) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys.txt")
	var b []byte
	for _, k := range keys {
		b = append(b, k.Identity+"\n"...)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOPS_AGE_KEY_FILE", path)
	// sops tells set from unset: these must be absent, not empty.
	for _, k := range []string{"SOPS_AGE_KEY", "SOPS_AGE_KEY_CMD", "SOPS_AGE_SSH_PRIVATE_KEY_FILE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir()) // no ~/.ssh keys either
}

// Encrypt encrypts plain text (YAML, JSON or dotenv, by the name's
// extension) for the recipients.
func Encrypt(t testing.TB, name string, plain []byte, recipients ...Key) []byte {
	t.Helper()
	var store sops.Store
	switch filepath.Ext(name) {
	case ".json":
		store = sopsjson.NewStore(&sopsconfig.JSONStoreConfig{})
	case ".env":
		store = sopsdotenv.NewStore(&sopsconfig.DotenvStoreConfig{})
	default:
		store = sopsyaml.NewStore(&sopsconfig.YAMLStoreConfig{})
	}
	branches, err := store.LoadPlainFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	var group sops.KeyGroup
	for _, r := range recipients {
		k, err := sopsage.MasterKeyFromRecipient(r.Recipient)
		if err != nil {
			t.Fatal(err)
		}
		group = append(group, k)
	}
	tree := sops.Tree{Branches: branches, Metadata: sops.Metadata{
		KeyGroups:         []sops.KeyGroup{group},
		UnencryptedSuffix: "_unencrypted",
		Version:           "3.13.3",
	}}
	key, errs := tree.GenerateDataKey()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	cipher := aes.NewCipher()
	mac, err := tree.Encrypt(key, cipher)
	if err != nil {
		t.Fatal(err)
	}
	tree.Metadata.LastModified = time.Now().UTC()
	if tree.Metadata.MessageAuthenticationCode, err = cipher.Encrypt(mac, key, tree.Metadata.LastModified.Format(time.RFC3339)); err != nil {
		t.Fatal(err)
	}
	out, err := store.EmitEncryptedFile(tree)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
