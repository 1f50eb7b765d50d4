package config

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/convoy-sh/convoy/internal/safefile"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	ctyyaml "github.com/zclconf/go-cty-yaml"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// functions returns the function table for expressions of a stack rooted at
// dir. File functions resolve relative paths against dir and refuse paths
// that leave it; absolute paths are taken as the user's explicit choice,
// unless root is set (EvalOptions.Root): then they are refused too.
func functions(dir, root string) map[string]function.Function {
	fs := map[string]function.Function{
		// strings
		"chomp": stdlib.ChompFunc, "format": stdlib.FormatFunc, "formatlist": stdlib.FormatListFunc,
		"indent": stdlib.IndentFunc, "join": stdlib.JoinFunc, "lower": stdlib.LowerFunc,
		"regex": stdlib.RegexFunc, "regexall": stdlib.RegexAllFunc, "replace": stdlib.ReplaceFunc,
		"split": stdlib.SplitFunc, "strrev": stdlib.ReverseFunc, "substr": stdlib.SubstrFunc,
		"title": stdlib.TitleFunc, "trim": stdlib.TrimFunc, "trimprefix": stdlib.TrimPrefixFunc,
		"trimsuffix": stdlib.TrimSuffixFunc, "trimspace": stdlib.TrimSpaceFunc, "upper": stdlib.UpperFunc,
		"strlen":     stdlib.StrlenFunc,
		"startswith": startsWithFunc, "endswith": endsWithFunc, "strcontains": strContainsFunc,
		// collections
		"chunklist": stdlib.ChunklistFunc, "coalesce": stdlib.CoalesceFunc, "coalescelist": stdlib.CoalesceListFunc,
		"compact": stdlib.CompactFunc, "concat": stdlib.ConcatFunc, "contains": stdlib.ContainsFunc,
		"distinct": stdlib.DistinctFunc, "element": stdlib.ElementFunc, "flatten": stdlib.FlattenFunc,
		"index": stdlib.IndexFunc, "keys": stdlib.KeysFunc, "length": lengthFunc,
		"lookup": stdlib.LookupFunc, "merge": stdlib.MergeFunc, "range": stdlib.RangeFunc,
		"reverse": stdlib.ReverseListFunc, "setintersection": stdlib.SetIntersectionFunc,
		"setproduct": stdlib.SetProductFunc, "setsubtract": stdlib.SetSubtractFunc,
		"setunion": stdlib.SetUnionFunc, "slice": stdlib.SliceFunc, "sort": stdlib.SortFunc,
		"values": stdlib.ValuesFunc, "zipmap": stdlib.ZipmapFunc,
		// numbers
		"abs": stdlib.AbsoluteFunc, "ceil": stdlib.CeilFunc, "floor": stdlib.FloorFunc,
		"log": stdlib.LogFunc, "max": stdlib.MaxFunc, "min": stdlib.MinFunc,
		"parseint": stdlib.ParseIntFunc, "pow": stdlib.PowFunc, "signum": stdlib.SignumFunc,
		// conversion and control
		"tobool": stdlib.MakeToFunc(cty.Bool), "tonumber": stdlib.MakeToFunc(cty.Number),
		"tostring": stdlib.MakeToFunc(cty.String), "tolist": stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
		"toset": stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)), "tomap": stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
		"try": tryfunc.TryFunc, "can": tryfunc.CanFunc,
		// encoding
		"jsonencode": stdlib.JSONEncodeFunc, "jsondecode": stdlib.JSONDecodeFunc,
		"yamlencode": ctyyaml.YAMLEncodeFunc, "yamldecode": ctyyaml.YAMLDecodeFunc,
		"csvdecode":    stdlib.CSVDecodeFunc,
		"base64encode": base64EncodeFunc, "base64decode": base64DecodeFunc,
		"urlencode": urlEncodeFunc,
		// hashes
		"md5":          hashFunc(func(b []byte) []byte { s := md5.Sum(b); return s[:] }),
		"sha1":         hashFunc(func(b []byte) []byte { s := sha1.Sum(b); return s[:] }),
		"sha256":       hashFunc(func(b []byte) []byte { s := sha256.Sum256(b); return s[:] }),
		"sha512":       hashFunc(func(b []byte) []byte { s := sha512.Sum512(b); return s[:] }),
		"base64sha256": base64HashFunc(func(b []byte) []byte { s := sha256.Sum256(b); return s[:] }),
		// dates (formatdate only: timestamp() would make plans unstable)
		"formatdate": stdlib.FormatDateFunc,
		// files
		"file":       fileFunc(dir, root),
		"fileexists": fileExistsFunc(dir, root),
		"sops_file":  sopsFileFunc(dir, root),
	}
	fs["yamldecode"] = guard(fs["yamldecode"], limitYAMLInput)
	fs["setproduct"] = guard(fs["setproduct"], limitProduct)
	fs["format"] = guard(fs["format"], limitFormatWidth)
	fs["formatlist"] = guard(fs["formatlist"], limitFormatWidth)
	fs["indent"] = guard(fs["indent"], limitIndent)
	fs["templatefile"] = templateFileFunc(dir, root, fs)
	return fs
}

// lengthFunc is Terraform's length: elements of a collection or tuple,
// attributes of an object, characters of a string.
var lengthFunc = function.New(&function.Spec{
	Params: []function.Parameter{{
		Name: "value", Type: cty.DynamicPseudoType, AllowDynamicType: true, AllowUnknown: true, AllowMarked: true,
	}},
	Type: function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		v, marks := args[0].Unmark()
		ty := v.Type()
		switch {
		case ty == cty.DynamicPseudoType:
			return cty.UnknownVal(cty.Number).WithMarks(marks), nil
		case ty.IsObjectType():
			return cty.NumberIntVal(int64(len(ty.AttributeTypes()))).WithMarks(marks), nil
		case ty.IsTupleType():
			return cty.NumberIntVal(int64(len(ty.TupleElementTypes()))).WithMarks(marks), nil
		case !v.IsKnown():
			return cty.UnknownVal(cty.Number).WithMarks(marks), nil
		case v.IsNull():
			return cty.UnknownVal(cty.Number), fmt.Errorf("argument must not be null")
		case ty == cty.String:
			n, err := stdlib.Strlen(v)
			return n.WithMarks(marks), err
		case ty.IsCollectionType():
			return v.Length().WithMarks(marks), nil
		}
		return cty.UnknownVal(cty.Number), fmt.Errorf("argument must be a string, a collection or an object, not %s", ty.FriendlyName())
	},
})

var startsWithFunc = stringPredicate("prefix", strings.HasPrefix)
var endsWithFunc = stringPredicate("suffix", strings.HasSuffix)
var strContainsFunc = stringPredicate("substr", strings.Contains)

func stringPredicate(arg string, f func(s, x string) bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "str", Type: cty.String}, {Name: arg, Type: cty.String}},
		Type:   function.StaticReturnType(cty.Bool),
		RefineResult: func(b *cty.RefinementBuilder) *cty.RefinementBuilder {
			return b.NotNull()
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return cty.BoolVal(f(args[0].AsString(), args[1].AsString())), nil
		},
	})
}

func stringFunc(f func(s string) (string, error)) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "str", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			s, err := f(args[0].AsString())
			if err != nil {
				return cty.UnknownVal(cty.String), err
			}
			return cty.StringVal(s), nil
		},
	})
}

var base64EncodeFunc = stringFunc(func(s string) (string, error) {
	return base64.StdEncoding.EncodeToString([]byte(s)), nil
})

var base64DecodeFunc = stringFunc(func(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("invalid base64: %w", err)
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("the decoded bytes are not valid UTF-8")
	}
	return string(b), nil
})

var urlEncodeFunc = stringFunc(func(s string) (string, error) { return url.QueryEscape(s), nil })

func hashFunc(h func([]byte) []byte) function.Function {
	return stringFunc(func(s string) (string, error) { return hex.EncodeToString(h([]byte(s))), nil })
}

func base64HashFunc(h func([]byte) []byte) function.Function {
	return stringFunc(func(s string) (string, error) { return base64.StdEncoding.EncodeToString(h([]byte(s))), nil })
}

// stackPath is the path a file function is given, ready for safefile:
// relative paths stay relative to the stack directory (and may not leave
// it, symlinks followed); "~/" paths are made absolute, like absolute
// paths the user's explicit choice.
func stackPath(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("empty path")
	}
	if strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, p[2:]), nil
	}
	return p, nil
}

// pathParam is the path parameter of the file functions. It accepts marked
// values so that a sensitive path never appears in an error message.
var pathParam = function.Parameter{Name: "path", Type: cty.String, AllowMarked: true}

// readFileArg reads the file a file function names: a regular file of at
// most MaxFileSize bytes of UTF-8 text. Errors are argument errors, which
// HCL reports at the path argument. The text carries the path's marks.
func readFileArg(dir, root string, arg cty.Value) (string, cty.ValueMarks, error) {
	v, marks := arg.Unmark()
	p := v.AsString()
	if err := confinePath(root, p, marks); err != nil {
		return "", marks, function.NewArgError(0, err)
	}
	path, err := stackPath(p)
	if err != nil {
		return "", marks, function.NewArgError(0, err)
	}
	b, err := stackDir(dir).Read(path, MaxFileSize)
	if err != nil {
		return "", marks, function.NewArgError(0, fileArgError(err, marks, root != ""))
	}
	if !utf8.Valid(b) {
		if len(marks) > 0 {
			p = SensitivePlaceholder
		}
		return "", marks, function.NewArgError(0, fmt.Errorf("%s is not valid UTF-8 text", p))
	}
	return string(b), marks, nil
}

// fileArgError adds what to do to a refused path, and says only why when
// the path is sensitive.
func fileArgError(err error, marks cty.ValueMarks, confined bool) error {
	if len(marks) > 0 {
		why := "cannot be read"
		var fe *safefile.Error
		switch {
		case errors.Is(err, safefile.ErrOutside):
			why = "leads outside the stack directory"
		case errors.Is(err, safefile.ErrNotRegular) && errors.As(err, &fe):
			why = "is not a regular file"
		case errors.Is(err, safefile.ErrTooLarge):
			why = fmt.Sprintf("is larger than %d bytes", MaxFileSize)
		case errors.Is(err, fs.ErrNotExist):
			why = "does not exist"
		}
		return fmt.Errorf("the file at the sensitive path %s", why)
	}
	switch {
	case errors.Is(err, safefile.ErrOutside) && confined:
		return fmt.Errorf("%w: %s", err, confinedDetail)
	case errors.Is(err, safefile.ErrOutside):
		return fmt.Errorf("%w; write an absolute path to read files elsewhere", err)
	}
	return err
}

func fileFunc(dir, root string) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{pathParam},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			s, marks, err := readFileArg(dir, root, args[0])
			if err != nil {
				return cty.UnknownVal(cty.String), err
			}
			return cty.StringVal(s).WithMarks(marks), nil
		},
	})
}

// fileExistsFunc is Terraform's fileexists: true for a regular file, false
// when nothing is there (a dangling symlink included), and an error for
// anything else (a directory, a FIFO, a device) and for paths that leave
// the stack directory, as file() would refuse them.
func fileExistsFunc(dir, root string) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{pathParam},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			v, marks := args[0].Unmark()
			if err := confinePath(root, v.AsString(), marks); err != nil {
				return cty.UnknownVal(cty.Bool), function.NewArgError(0, err)
			}
			path, err := stackPath(v.AsString())
			if err != nil {
				return cty.UnknownVal(cty.Bool), function.NewArgError(0, err)
			}
			st, err := stackDir(dir).Stat(path)
			if err == nil && !st.Mode().IsRegular() {
				err = &safefile.Error{Name: v.AsString(), Err: safefile.ErrNotRegular, Mode: st.Mode()}
			}
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return cty.False.WithMarks(marks), nil
			case err != nil:
				return cty.UnknownVal(cty.Bool), function.NewArgError(0, fileArgError(err, marks, root != ""))
			}
			return cty.True.WithMarks(marks), nil
		},
	})
}

// templateFileFunc renders a template file with the given variables. The
// template sees the stack's functions except templatefile itself, so a
// template cannot recurse.
func templateFileFunc(dir, root string, funcs map[string]function.Function) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{
			pathParam,
			{Name: "vars", Type: cty.DynamicPseudoType},
		},
		Type: function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func(args []cty.Value, _ cty.Type) (result cty.Value, err error) {
			src, marks, err := readFileArg(dir, root, args[0])
			if err != nil {
				return cty.DynamicVal, err
			}
			defer func() { result = result.WithMarks(marks) }()
			pv, _ := args[0].Unmark()
			p := pv.AsString()
			if len(marks) > 0 {
				p = SensitivePlaceholder
			}
			vars := args[1]
			if !vars.Type().IsObjectType() && !vars.Type().IsMapType() {
				return cty.DynamicVal, function.NewArgErrorf(1, "template variables must be an object or map")
			}
			if !vars.IsWhollyKnown() {
				return cty.DynamicVal, nil
			}
			if diags := checkNesting(p, []byte(src), hcl.InitialPos); diags.HasErrors() {
				return cty.DynamicVal, fmt.Errorf("%s: %s", p, diags.Error())
			}
			expr, diags := hclsyntax.ParseTemplate([]byte(src), p, hcl.InitialPos)
			if diags.HasErrors() {
				return cty.DynamicVal, fmt.Errorf("%s: %s", p, diags.Error())
			}
			wholeText(expr)
			varMap := map[string]cty.Value{}
			if !vars.IsNull() {
				for it := vars.ElementIterator(); it.Next(); {
					k, v := it.Element()
					varMap[k.AsString()] = v
				}
			}
			for _, trav := range expr.Variables() {
				if _, ok := varMap[trav.RootName()]; !ok {
					return cty.DynamicVal, fmt.Errorf("%s: the template refers to %q, which is not in the template variables", trav.SourceRange(), trav.RootName())
				}
			}
			inner := make(map[string]function.Function, len(funcs))
			for k, f := range funcs {
				if k != "templatefile" {
					inner[k] = f
				}
			}
			val, diags := expr.Value(&hcl.EvalContext{Variables: varMap, Functions: inner})
			if diags.HasErrors() {
				return cty.DynamicVal, fmt.Errorf("%s", diags.Error())
			}
			return val, nil
		},
	})
}
