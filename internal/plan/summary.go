package plan

import "fmt"

// Summary counts a plan's actions.
type Summary struct {
	Install, Upgrade, Uninstall, Unchanged int
	// Forget counts releases removed blocks stop managing (destroy =
	// false); Moved those moved blocks moved keeping their Helm name,
	// Renamed those they gave a new one.
	Forget, Moved, Renamed int
	// Drifted counts live objects that differ from what convoy applied.
	Drifted int
	// Refused counts releases another stack owns, or whose objects another
	// release owns (Conflicted of them): apply refuses to run.
	Refused, Conflicted int
	// Destroy: the plan of convoy destroy, which only uninstalls.
	Destroy bool
}

// Summary counts the plan's actions and drifted objects.
func (p *Plan) Summary() Summary {
	s := Summary{Destroy: p.Destroy}
	for _, r := range p.Releases {
		if r.Refused() {
			s.Refused++
			if len(r.Conflicts) > 0 {
				s.Conflicted++
			}
			continue
		}
		switch r.Action {
		case ActionInstall:
			s.Install++
		case ActionUpgrade:
			s.Upgrade++
		case ActionUninstall:
			s.Uninstall++
		case ActionNoOp:
			s.Unchanged++
		case ActionForget:
			s.Forget++
		}
		switch {
		case r.Rename != nil:
			s.Renamed++
		case r.MovedFrom != nil:
			s.Moved++
		}
		s.Drifted += len(r.Drift)
	}
	return s
}

func (s Summary) String() string {
	if s.Destroy {
		return fmt.Sprintf("Plan: %d to uninstall.", s.Uninstall)
	}
	line := fmt.Sprintf("Plan: %d to install, %d to upgrade, %d to uninstall, %d unchanged.", s.Install, s.Upgrade, s.Uninstall, s.Unchanged)
	if s.Forget > 0 {
		line = line[:len(line)-1] + fmt.Sprintf(", %d to forget.", s.Forget)
	}
	if s.Moved > 0 {
		line += fmt.Sprintf(" Moved: %d.", s.Moved)
	}
	if s.Renamed > 0 {
		line += fmt.Sprintf(" Renamed: %d.", s.Renamed)
	}
	if s.Drifted > 0 {
		line += fmt.Sprintf(" Drift: %d %s.", s.Drifted, plural(s.Drifted, "object", "objects"))
	}
	switch {
	case s.Refused > 0 && s.Conflicted == 0:
		line += fmt.Sprintf(" Refused: %d %s owned by another stack: apply refuses to run.", s.Refused, plural(s.Refused, "release", "releases"))
	case s.Refused > 0:
		line += fmt.Sprintf(" Refused: %d %s owned by another stack or holding objects another release owns: apply refuses to run.", s.Refused, plural(s.Refused, "release", "releases"))
	}
	return line
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
