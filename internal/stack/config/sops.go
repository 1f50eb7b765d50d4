package config

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsconfig "github.com/getsops/sops/v3/config"
	sopsdotenv "github.com/getsops/sops/v3/stores/dotenv"
	sopsini "github.com/getsops/sops/v3/stores/ini"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// sopsFileFunc is sops_file(path): the decrypted text of a SOPS file (YAML,
// JSON, dotenv or INI, by extension; anything else is a binary file),
// always sensitive. The file is read like file() (inside the stack
// directory, regular, bounded); it is decrypted in-process with the keys
// sops itself would find: age (SOPS_AGE_KEY_FILE, SOPS_AGE_KEY, the user's
// sops/age/keys.txt), PGP (the GnuPG keyring), and the cloud KMS services
// through their usual credentials.
// Decryptions are kept for the life of the function (one evaluation), by
// path and content, so that a file is decrypted once however many
// expressions read it (a KMS key is a network call).
func sopsFileFunc(dir, root string) function.Function {
	var mu sync.Mutex
	cache := map[[32]byte][]byte{}
	return function.New(&function.Spec{
		Params: []function.Parameter{pathParam},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			src, marks, err := readFileArg(dir, root, args[0])
			if err != nil {
				return cty.UnknownVal(cty.String), err
			}
			name := args[0]
			if len(marks) > 0 {
				name = cty.StringVal(SensitivePlaceholder)
			} else {
				name, _ = name.Unmark()
			}
			key := sha256.Sum256([]byte(name.AsString() + "\x00" + src))
			mu.Lock()
			plain, ok := cache[key]
			mu.Unlock()
			if !ok {
				if plain, err = sopsDecrypt(name.AsString(), []byte(src)); err != nil {
					return cty.UnknownVal(cty.String), function.NewArgError(0, err)
				}
				mu.Lock()
				cache[key] = plain
				mu.Unlock()
			}
			return cty.StringVal(string(plain)).WithMarks(marks).Mark(Sensitive), nil
		},
	})
}

// sopsDecrypt decrypts a SOPS document as sops' decrypt package does, and
// says which file and which recipients when it cannot: no key of the
// file's recipients is at hand, the file was tampered with (the MAC does
// not match), or it is not a SOPS file.
func sopsDecrypt(path string, data []byte) ([]byte, error) {
	decryptions.Add(1)
	store := sopsStore(path)
	tree, err := store.LoadEncryptedFile(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not a SOPS-encrypted file: %s", path, oneLine(err))
	}
	recipients := sopsRecipients(tree.Metadata)
	key, err := tree.Metadata.GetDataKey()
	if err != nil {
		return nil, fmt.Errorf("cannot decrypt %s: no key of its recipients (%s) is available; for age, set SOPS_AGE_KEY_FILE or SOPS_AGE_KEY, or put the key in sops/age/keys.txt in the user config directory (%s)",
			path, recipients, oneLine(err))
	}
	cipher := aes.NewCipher()
	mac, err := tree.Decrypt(key, cipher)
	if err != nil {
		return nil, fmt.Errorf("cannot decrypt %s (recipients %s): the file was altered or is damaged: %s", path, recipients, oneLine(err))
	}
	want, err := cipher.Decrypt(tree.Metadata.MessageAuthenticationCode, key, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil {
		return nil, fmt.Errorf("cannot decrypt %s (recipients %s): its MAC cannot be decrypted: the file was altered or is damaged", path, recipients)
	}
	if want != mac {
		return nil, fmt.Errorf("cannot decrypt %s (recipients %s): the MAC does not match the content: the file was altered after it was encrypted", path, recipients)
	}
	out, err := store.EmitPlainFile(tree.Branches)
	if err != nil {
		return nil, fmt.Errorf("cannot decrypt %s: %s", path, oneLine(err))
	}
	return out, nil
}

// sopsStore is the store sops would use for a file, by its extension.
func sopsStore(path string) sops.Store {
	lower := strings.ToLower(path)
	switch {
	case strings.HasSuffix(lower, ".yaml"), strings.HasSuffix(lower, ".yml"):
		return sopsyaml.NewStore(&sopsconfig.YAMLStoreConfig{})
	case strings.HasSuffix(lower, ".json"):
		return sopsjson.NewStore(&sopsconfig.JSONStoreConfig{})
	case strings.HasSuffix(lower, ".env"):
		return sopsdotenv.NewStore(&sopsconfig.DotenvStoreConfig{})
	case strings.HasSuffix(lower, ".ini"):
		return sopsini.NewStore(&sopsconfig.INIStoreConfig{})
	}
	return sopsjson.NewBinaryStore(&sopsconfig.JSONBinaryStoreConfig{})
}

// sopsRecipients lists the keys a file was encrypted for: "age:
// age1...", "pgp: FINGERPRINT", "kms: arn:...".
func sopsRecipients(m sops.Metadata) string {
	var out []string
	for _, g := range m.KeyGroups {
		for _, k := range g {
			out = append(out, k.TypeToIdentifier()+": "+k.ToString())
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// oneLine keeps the first line of a (possibly multi-line) library error.
func oneLine(err error) string {
	for errors.Unwrap(err) != nil && strings.Contains(err.Error(), "\n") {
		err = errors.Unwrap(err)
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
