package models

import (
	. "github.com/gomlx/gomlx/pkg/core/graph"
)

// network builds the model's architecture on x [K, B, InputShape...] and returns its outputs
// [K, B, NumClasses] (logits, or the regression mean when NumClasses is 1).
func (b *builder) network(x *Node) *Node {
	cfg := &b.m.cfg
	var out *Node
	switch cfg.Arch {
	case ArchMLP:
		out = b.mlp(x)
	case ArchLeNet:
		out = b.lenet(x)
	case ArchCNN3:
		out = b.cnn3(x)
	case ArchResNet20:
		out = b.resnet20(x)
	}
	if b.weightLayer != numWeightLayers(*cfg) {
		panicf("models: internal error: %s built %d weight layers, expected %d", cfg.Arch, b.weightLayer, numWeightLayers(*cfg))
	}
	return out
}

// mlp: [dense -> ReLU -> dropout] per hidden width, then the output dense layer (Hasan (2023), Section 5).
func (b *builder) mlp(x *Node) *Node {
	h := flatten(x)
	for _, width := range b.m.cfg.Hidden {
		h = b.dropout(relu(b.dense(h, width)))
	}
	return b.dense(h, b.m.cfg.NumClasses)
}

// lenet: [5x5 conv -> ReLU -> 2x2 max-pool -> dropout] per channel count, flatten, [dense -> ReLU ->
// dropout] per dense width, output dense (Ozer et al. (2022), appendix; Jamoussi et al. (BA-BFL), Section 5).
func (b *builder) lenet(x *Node) *Node { return b.lenetHead(b.lenetTrunk(x)) }

// lenetTrunk is LeNet's convolutional part, flattened: [K, B, features].
func (b *builder) lenetTrunk(x *Node) *Node {
	h := x
	for _, ch := range b.m.cfg.ConvChannels {
		h = b.dropout(maxPool2(relu(b.conv(h, ch, 5, 1, false))))
	}
	return flatten(h)
}

// lenetHead is LeNet's dense part on the trunk's features.
func (b *builder) lenetHead(h *Node) *Node {
	for _, width := range b.m.cfg.DenseWidths {
		h = b.dropout(relu(b.dense(h, width)))
	}
	return b.dense(h, b.m.cfg.NumClasses)
}

// cnn3: [3x3 same conv -> ReLU -> 2x2 max-pool -> dropout] per channel count, flatten, output dense
// (Hasan (2023), Section 5).
func (b *builder) cnn3(x *Node) *Node { return b.cnn3Head(b.cnn3Trunk(x)) }

// cnn3Trunk is CNN3's convolutional part, flattened: [K, B, features].
func (b *builder) cnn3Trunk(x *Node) *Node {
	h := x
	for _, ch := range b.m.cfg.ConvChannels {
		h = b.dropout(maxPool2(relu(b.conv(h, ch, 3, 1, true))))
	}
	return flatten(h)
}

// cnn3Head is CNN3's output layer on the trunk's features.
func (b *builder) cnn3Head(h *Node) *Node { return b.dense(h, b.m.cfg.NumClasses) }

// resnet20 is the CIFAR ResNet-20 of He et al. (2016), Section 4.2, as used by Fischer et al. (2024),
// Section 3.2 and Fig. 1: in the MC-dropout net a dropout follows every convolution; in the Bayesian net
// every convolution and the dense layer are Gaussian (with Flipout in that paper).
func (b *builder) resnet20(x *Node) *Node {
	chans := b.m.cfg.ConvChannels
	h := b.dropout(relu(b.batchNorm(b.conv(x, chans[0], 3, 1, true))))
	for stage, ch := range chans {
		for block := 0; block < 3; block++ {
			stride := 1
			if stage > 0 && block == 0 {
				stride = 2
			}
			y := b.dropout(relu(b.batchNorm(b.conv(h, ch, 3, stride, true))))
			y = b.batchNorm(b.conv(y, ch, 3, 1, true))
			shortcut := h
			if stride != 1 || h.Shape().Dimensions[4] != ch {
				shortcut = b.conv(h, ch, 1, stride, false)
			}
			h = b.dropout(relu(Add(y, shortcut)))
		}
	}
	h = ReduceMean(h, 2, 3) // global average pooling: [K, B, C]
	return b.dense(h, b.m.cfg.NumClasses)
}
