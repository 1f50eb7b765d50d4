package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// getList is what `convoy get stacks`, `get pipelines` and `get stacksets`
// share: connect, list the objects of the namespace (of every namespace
// with all), say so on stderr when there are none ("No Stacks."), else
// write a table of header and a row per object.
func getList[T any](ctx context.Context, s streams, f *kubeFlags, namespace string, all bool, plural string,
	list func(context.Context, client.Client, string) ([]T, error), header string, row func(*T) string) error {
	c, ns, err := f.connect(namespace)
	if err != nil {
		return err
	}
	if all {
		ns = ""
	}
	items, err := list(ctx, c, ns)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		fmt.Fprintf(s.Err, "No %s.\n", plural)
		return nil
	}
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for i := range items {
		fmt.Fprintln(tw, row(&items[i]))
	}
	return tw.Flush()
}

// namespaceColumn puts the namespace before a row (or header) when the
// table lists every namespace.
func namespaceColumn(all bool, namespace, row string) string {
	if all {
		return namespace + "\t" + row
	}
	return row
}
