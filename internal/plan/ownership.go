package plan

import (
	"fmt"
	"strings"
)

// Interrupted is a pending record left by a run of the stack that ended
// without finishing it.
type Interrupted struct {
	// RunID is the run that wrote it (release.RunLabel).
	RunID    string
	Revision int
	// Status is the pending status it was left in.
	Status string
}

func (i *Interrupted) String() string {
	return fmt.Sprintf("interrupted run %s: revision %d left %s; apply marks it failed", i.RunID, i.Revision, i.Status)
}

// ObjectConflict is an object a release would apply that another Helm
// release owns (its meta.helm.sh/release-name and -namespace annotations).
type ObjectConflict struct {
	Ref                          ObjectRef
	OwnerRelease, OwnerNamespace string
	// OwnerStack is the stack the owner's newest record names ("" when no
	// stack owns it: a release of helm's, or of no stack).
	OwnerStack string `json:",omitempty"`
}

func (c ObjectConflict) String() string {
	s := fmt.Sprintf("%s is owned by release %s (namespace %s", c.Ref, c.OwnerRelease, c.OwnerNamespace)
	if c.OwnerStack != "" {
		return s + fmt.Sprintf(", stack %q)", c.OwnerStack)
	}
	return s + "); take_ownership = true in the release block adopts it"
}

// Takeover is a release whose newest record this stack did not write and
// no other stack owns now: installed by helm (or by a stack before
// convoy labelled records), let go by a stack, or written by a Stack of
// another namespace (the controller).
type Takeover struct {
	// Stack is the stack that wrote or let go of the release ("": helm).
	Stack string `json:",omitempty"`
	// Namespace is the namespace of that stack's Stack object, when the
	// controller wrote it.
	Namespace string `json:",omitempty"`
	// LetGo: the stack let the release go (removed, destroy = false; a
	// Stack deleted without prune).
	LetGo bool `json:",omitempty"`
	// Allowed: apply takes it over (adopt = true, or let go by a stack).
	Allowed bool `json:",omitempty"`
	// Refusal says why apply never takes it over, adopt or not ("": it
	// may, given adopt = true).
	Refusal string `json:",omitempty"`
}

// By says who wrote the release: "installed by helm, not by a stack",
// "let go by stack NS/NAME", "installed by stack NS/NAME".
func (t *Takeover) By() string {
	who := t.Stack
	if t.Namespace != "" {
		who = t.Namespace + "/" + t.Stack
	}
	switch {
	case t.Stack == "":
		return "installed by helm, not by a stack"
	case t.LetGo:
		return "let go by stack " + who
	}
	return "installed by stack " + who
}

// String is what the plan says of it: "adopt: installed by helm, not by a
// stack; …".
func (t *Takeover) String() string {
	switch {
	case t.Refusal != "":
		return fmt.Sprintf("adopt: %s; %s", t.By(), t.Refusal)
	case t.Allowed:
		return fmt.Sprintf("adopt: %s; this stack takes it over", t.By())
	}
	return fmt.Sprintf("adopt: %s; apply refuses to change it unless its release block says adopt = true", t.By())
}

// Refused reports whether apply refuses to change the release: another
// stack owns it and this one does not adopt it, no stack wrote it and
// this one does not say adopt = true, or another release owns objects it
// would apply. This is the one rule of which stack may touch which
// release; ForeignError reports it.
func (r *ReleaseChange) Refused() bool {
	return (r.Owner != "" && !r.Adopt) || (r.Takeover != nil && !r.Takeover.Allowed) || len(r.Conflicts) > 0
}

// Refused lists the releases apply refuses to change.
func (p *Plan) Refused() []*ReleaseChange {
	var out []*ReleaseChange
	for _, r := range p.Releases {
		if r.Refused() {
			out = append(out, r)
		}
	}
	return out
}

// ForeignError is a plan that would change releases other stacks own:
// planning returns it with the plan, and apply refuses the plan whole,
// before changing anything.
type ForeignError struct {
	Releases []*ReleaseChange
}

func (e *ForeignError) Error() string {
	var b strings.Builder
	heading := "apply refuses to change releases other stacks own: "
	for _, rc := range e.Releases {
		if rc.Takeover != nil {
			heading = "apply refuses to change releases this stack did not install: "
		}
	}
	for _, rc := range e.Releases {
		if len(rc.Conflicts) > 0 {
			heading = "apply refuses to change releases other stacks own or whose objects other releases own: "
			break
		}
	}
	b.WriteString(heading)
	n := 0
	sep := func() {
		if n > 0 {
			b.WriteString("; ")
		}
		n++
	}
	for _, rc := range e.Releases {
		if t := rc.Takeover; t != nil && !t.Allowed {
			sep()
			fmt.Fprintf(&b, "%s (release %s, namespace %s, revision %d): %s", rc.Addr, rc.Name, rc.Namespace, rc.Observed.LastRevision, t)
		}
		if rc.Owner != "" && !rc.Adopt {
			sep()
			fmt.Fprintf(&b, "%s (release %s, namespace %s) is owned by stack %q (revision %d); to take it over, set adopt_from_stack = %q in its release block",
				rc.Addr, rc.Name, rc.Namespace, rc.Owner, rc.Observed.LastRevision, rc.Owner)
		}
		for _, c := range rc.Conflicts {
			sep()
			fmt.Fprintf(&b, "%s: %s", rc.Addr, c)
		}
	}
	return b.String()
}

// Foreign returns a *ForeignError when the plan would change releases other
// stacks own, else nil.
func (p *Plan) Foreign() error {
	if r := p.Refused(); len(r) > 0 {
		return &ForeignError{Releases: r}
	}
	return nil
}
