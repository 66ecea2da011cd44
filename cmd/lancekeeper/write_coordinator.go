package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancekeeper/lancekeeper/commit"
	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	coordclient "github.com/lancekeeper/lancekeeper/coordinator/client"
)

// tokenEnv names the variable holding the bearer token a client sends.
const tokenEnv = "LANCEKEEPER_TOKEN"

// errCoordinatorUsage marks `write --coordinator` usage errors (exit 2).
var errCoordinatorUsage = errors.New("coordinator")

// coordinatorWrite is what `write --coordinator` needs besides the write
// options.
type coordinatorWrite struct {
	url     string // coordinator base URL
	token   string // "" = $LANCEKEEPER_TOKEN
	dataset string // name at the coordinator; "" = derived from the dataset URL
}

// writeViaCoordinator writes the data files directly to st (the dataset at
// datasetURL) and commits them through the coordinator. Unless a dataset
// name is given, the name is datasetURL relative to the coordinator root
// it lies under (GET /v1/roots), which also checks that client and
// coordinator address the same place.
func writeViaCoordinator(ctx context.Context, st commit.Store, datasetURL string, rdr array.RecordReader, opts commit.WriteOptions, cw coordinatorWrite) (*commit.WriteResult, error) {
	token := cw.token
	if token == "" {
		token = os.Getenv(tokenEnv)
	}
	root, name := "", cw.dataset
	probe, err := coordclient.New(cw.url, coordclient.Options{Token: token})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errCoordinatorUsage, err)
	}
	if name == "" {
		roots, err := probe.Roots(ctx)
		if err != nil {
			return nil, usageError(err)
		}
		if root, name, err = coordclient.DatasetName(roots, datasetURL); err != nil {
			return nil, fmt.Errorf("%w: %w (or pass --dataset-name)", errCoordinatorUsage, err)
		}
	} else if err := coordapi.ValidateDatasetName(name); err != nil {
		return nil, fmt.Errorf("%w: --dataset-name: %w", errCoordinatorUsage, err)
	}
	c, err := coordclient.New(cw.url, coordclient.Options{Token: token, Root: root})
	if err != nil {
		return nil, err
	}
	res, err := c.WriteArrow(ctx, st, name, rdr, opts)
	return res, usageError(err)
}

// usageError marks a refused token as a usage error (exit 2).
func usageError(err error) error {
	if errors.Is(err, coordclient.ErrUnauthorized) {
		return fmt.Errorf("%w: %w (set --token or $%s)", errCoordinatorUsage, err, tokenEnv)
	}
	return err
}
