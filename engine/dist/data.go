package dist

import (
	"fmt"
	"sync"

	"scaleplan/engine/data"
)

// Input shape both reference networks take.
const (
	inputDim   = 28 * 28
	numClasses = 10
)

// datasets are the training and evaluation sets of a run.
type datasets struct {
	train, eval *data.Dataset
}

// cache keeps the data sets loaded in this process, so that a sweep of
// many runs reads Fashion-MNIST once. Data sets are never modified.
var cache struct {
	sync.Mutex
	m map[Data]*datasets
}

// loadData returns the data sets d describes.
func loadData(d Data) (*datasets, error) {
	cache.Lock()
	defer cache.Unlock()
	if ds, ok := cache.m[d]; ok {
		return ds, nil
	}
	var train, test *data.Dataset
	var err error
	if d.Dir != "" {
		train, test, err = data.Load(d.Dir)
	} else {
		train, test, err = data.Synthetic(d.Synthetic)
	}
	if err != nil {
		return nil, err
	}
	if train.Dim() != inputDim || train.Classes > numClasses {
		return nil, fmt.Errorf("data set %s: %dx%d images in %d classes, the networks take 28x28 images in up to %d classes",
			train.Name, train.Rows, train.Cols, train.Classes, numClasses)
	}
	ds := &datasets{train: train, eval: test}
	if v := d.Validation; v > 0 {
		if v >= train.N {
			return nil, fmt.Errorf("data set %s: %d validation samples leave none of %d to train on", train.Name, v, train.N)
		}
		ds.train, ds.eval = train.Slice(0, train.N-v), train.Slice(train.N-v, train.N)
	}
	if cache.m == nil {
		cache.m = make(map[Data]*datasets)
	}
	cache.m[d] = ds
	return ds, nil
}
