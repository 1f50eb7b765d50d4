package config

import "testing"

func TestSuggestName(t *testing.T) {
	declared := map[string]bool{"web": true, "postgres": true, "cache": true, "api": true}
	for given, want := range map[string]string{
		"wbe":       "web",      // a transposition: two edits
		"postgress": "postgres", // one
		"cahce":     "cache",
		"Web":       "web",
		"ap":        "api",
		"redis":     "", // nothing close
		"frontend":  "",
		"ui":        "", // two edits from "api", but a two-letter name
		"db":        "",
	} {
		if got := suggestName(given, declared); got != want {
			t.Errorf("suggestName(%q) = %q, want %q", given, got, want)
		}
	}
	if got := suggestName("x", map[string]int{}); got != "" {
		t.Errorf("suggestName with nothing declared = %q", got)
	}
}
