package policy

import (
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// declTypes are the types of the three variables: every field evaluate.go
// gives them (objectValue, releaseValue, planValue), as docs/policies.md
// lists them. Objects and values whose shape is the chart's are dyn. A
// field added to a variable is declared here too, or conditions reading it
// do not compile.
func declTypes() (object, release, plan *apiservercel.DeclType) {
	str, dyn, boolean, integer := apiservercel.StringType, apiservercel.DynType, apiservercel.BoolType, apiservercel.IntType
	source := objectType("convoy.policy.Source", map[string]*apiservercel.DeclType{
		"file": str, "line": integer, "column": integer, "env": str, "flag": str,
	})
	edit := objectType("convoy.policy.Edit", map[string]*apiservercel.DeclType{"input": str, "kind": str, "source": source})
	origin := objectType("convoy.policy.Origin", map[string]*apiservercel.DeclType{
		"input": str, "kind": str, "source": source,
		"via": apiservercel.NewListType(dyn, -1), "overrode": apiservercel.NewListType(dyn, -1),
		"edits": apiservercel.NewListType(edit, -1),
	})
	change := objectType("convoy.policy.Change", map[string]*apiservercel.DeclType{
		"path": str, "op": str, "before": dyn, "after": dyn, "manager": str, "sensitive": boolean,
		"provenance": apiservercel.NewListType(origin, -1), "provenance_joint": boolean,
	})
	object = objectType("convoy.policy.Object", map[string]*apiservercel.DeclType{
		"ref": str, "apiVersion": str, "group": str, "kind": str, "namespace": str, "name": str,
		"action": str, "hook": str, "before": dyn, "after": dyn,
		"changes": apiservercel.NewListType(change, -1),
	})
	chart := objectType("convoy.policy.Chart", map[string]*apiservercel.DeclType{"before": dyn, "after": dyn})
	deprecation := objectType("convoy.policy.Deprecation", map[string]*apiservercel.DeclType{
		"ref": str, "api_version": str, "kind": str, "deprecated_in": str, "removed_in": str, "removed": boolean, "replacement": str,
	})
	release = objectType("convoy.policy.Release", map[string]*apiservercel.DeclType{
		"address": str, "name": str, "namespace": str, "cluster": str, "action": str,
		"reasons": apiservercel.NewListType(str, -1),
		"labels":  apiservercel.NewMapType(str, str, -1),
		"chart":   chart,
		"values":  dyn, "values_before": dyn, "impact": dyn,
		"kube_target":  str,
		"deprecations": apiservercel.NewListType(deprecation, -1),
	})
	summary := objectType("convoy.policy.Summary", map[string]*apiservercel.DeclType{
		"install": integer, "upgrade": integer, "uninstall": integer, "unchanged": integer, "drifted": integer, "refused": integer,
	})
	plan = objectType("convoy.policy.Plan", map[string]*apiservercel.DeclType{
		"stack": str, "environment": str, "destroy": boolean, "summary": summary,
	})
	return object, release, plan
}

func objectType(name string, fields map[string]*apiservercel.DeclType) *apiservercel.DeclType {
	decl := make(map[string]*apiservercel.DeclField, len(fields))
	for f, t := range fields {
		decl[f] = apiservercel.NewDeclField(f, t, false, nil, nil)
	}
	return apiservercel.NewObjectType(name, decl)
}
