package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// The stack block's storage block: where the stack's release records
// live, as Helm's HELM_DRIVER.
//
//	stack "shop" {
//	  storage {
//	    driver     = "sql"
//	    connection = var.records_db   # sensitive; else $HELM_DRIVER_SQL_CONNECTION_STRING
//	  }
//	}

// StorageBlock is the decoded storage block.
type StorageBlock struct {
	Driver     hcl.Expression // nil when unset
	Connection hcl.Expression // nil when unset
	DeclRange  hcl.Range
}

var storageBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "driver"},
		{Name: "connection"},
	},
}

func decodeStorageBlock(block *hcl.Block) (*StorageBlock, hcl.Diagnostics) {
	content, diags := block.Body.Content(storageBlockSchema)
	return &StorageBlock{Driver: attrExpr(content, "driver"), Connection: attrExpr(content, "connection"), DeclRange: block.DefRange}, diags
}

// Storage drivers a storage block may name.
const (
	StorageSecret    = "secret"
	StorageConfigMap = "configmap"
	StorageSQL       = "sql"
)

// Storage is the evaluated storage block.
type Storage struct {
	// Driver is StorageSecret, StorageConfigMap or StorageSQL.
	Driver string
	// Connection is the SQL driver's connection string ("" when unset:
	// the run's, $HELM_DRIVER_SQL_CONNECTION_STRING). It may hold a
	// password: it prints as (sensitive).
	Connection SensitiveString
	DeclRange  hcl.Range
}

// SensitiveString is a string that never prints: fmt, %v, %s, %#v and
// JSON all show "(sensitive)". Reveal it with string(s) where it is used.
type SensitiveString string

func (s SensitiveString) String() string   { return "(sensitive)" }
func (s SensitiveString) GoString() string { return `"(sensitive)"` }

// MarshalJSON implements json.Marshaler.
func (s SensitiveString) MarshalJSON() ([]byte, error) { return []byte(`"(sensitive)"`), nil }

// Format implements fmt.Formatter, for every verb.
func (s SensitiveString) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte("(sensitive)")) }

// evalStorage evaluates the stack block's storage block.
func (e *evaluator) evalStorage(sb *StorageBlock) hcl.Diagnostics {
	if sb == nil {
		return nil
	}
	var diags hcl.Diagnostics
	st := &Storage{Driver: StorageSecret, DeclRange: sb.DeclRange}
	if sb.Driver != nil {
		val, d := e.evalSimple(sb.Driver, "the storage block")
		diags = append(diags, d...)
		if !d.HasErrors() {
			s, d := asString(val, sb.Driver, "driver")
			diags = append(diags, d...)
			switch {
			case d.HasErrors():
			case s == "secret" || s == "secrets" || s == "":
				st.Driver = StorageSecret
			case s == "configmap" || s == "configmaps":
				st.Driver = StorageConfigMap
			case s == "sql":
				st.Driver = StorageSQL
			default:
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Invalid storage driver",
					Detail:   fmt.Sprintf("%q is not a storage driver: want \"secret\" (the default), \"configmap\" or \"sql\", as Helm's HELM_DRIVER.", s),
					Subject:  sb.Driver.Range().Ptr(),
				})
			}
		}
	}
	if sb.Connection != nil {
		val, d := e.evalSimple(sb.Connection, "the storage block")
		diags = append(diags, d...)
		if !d.HasErrors() {
			// The connection string may hold a password: whatever it
			// came from, it is treated as sensitive (errors about it
			// never show it).
			val, _ = val.Unmark()
			if conv, err := convertString(val); err != nil {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid connection",
					Detail: "connection is a PostgreSQL connection string (a string).", Subject: sb.Connection.Range().Ptr()})
			} else if !conv.IsKnown() {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid connection",
					Detail: "connection must be known before the plan: give it from a variable or an environment variable.", Subject: sb.Connection.Range().Ptr()})
			} else if !conv.IsNull() {
				st.Connection = SensitiveString(conv.AsString())
			}
		}
		if st.Driver != StorageSQL && !diags.HasErrors() {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Connection without the sql driver",
				Detail:   fmt.Sprintf("connection is the sql driver's; driver is %q.", st.Driver),
				Subject:  sb.Connection.Range().Ptr(),
			})
		}
	}
	e.storage = st
	return diags
}

// convertString converts v to a string without showing it in errors.
func convertString(v cty.Value) (cty.Value, error) {
	if v.IsNull() {
		return cty.NullVal(cty.String), nil
	}
	if !v.IsKnown() {
		return v, nil
	}
	if v.Type() != cty.String {
		return cty.NilVal, fmt.Errorf("not a string")
	}
	return v, nil
}
