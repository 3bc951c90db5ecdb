package client

import (
	"context"
	"fmt"
	"io"
)

// Blob reads the full content of an oversize result (its BlobRef).
func (c *Client) Blob(ctx context.Context, ref string) ([]byte, error) {
	if ref == "" {
		// A result that fit has no BlobRef: say so rather than pass the
		// store an empty name.
		return nil, fmt.Errorf("client: blob: the ref is empty (only a result stored for its size has a BlobRef)")
	}
	obs, err := c.js.ObjectStore(ctx, c.cfg.Space.BlobBucket())
	if err != nil {
		return nil, fmt.Errorf("client: blob store: %w", err)
	}
	r, err := obs.Get(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("client: blob %s: %w", ref, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("client: blob %s: %w", ref, err)
	}
	return b, nil
}
