// Package artifact moves stack directories through OCI registries:
// Push packs a stack directory (its files, the lock file, and the local
// charts it names by relative path, even outside the directory) into one
// artifact addressed by digest; Fetch pulls an artifact by tag or digest
// into a content-addressed cache and returns the stack directory in it.
//
// What is pulled is hostile input: the archive may only hold regular files
// and directories under clean relative names; its layer, its files and its
// unpacked size are capped, and the layer is verified against its digest
// before anything is written.
package artifact
