package model

import (
	"fmt"
	"strings"
)

// gpt3 returns a GPT-3 shape of Brown et al. 2020 ("Language Models are
// Few-Shot Learners"), Table 2.1: GPT-2's tokenizer of 50,257 tokens,
// 2,048-token context, learned positions, tied embeddings, pre-norm
// LayerNorm, biases, GELU with f = 4d, dropout.
func gpt3(name string, layers, d, heads int, published float64) TransformerShape {
	return TransformerShape{Name: name, Source: "Brown et al. 2020, Table 2.1", Stack: DecoderOnly,
		Layers: layers, Hidden: d, Heads: heads, FFN: 4 * d, Activation: FFNGELU, Vocab: 50257, SeqLen: 2048,
		Positions: LearnedPositions, TiedEmbeddings: true, Norm: NormLayer, PreNorm: true, Bias: true, Dropout: true,
		Published: published}
}

// llama returns a Llama shape: rotary positions, untied embeddings,
// pre-norm RMSNorm, no biases, SwiGLU, no dropout.
func llama(name, source string, layers, d, heads, kv, ffn, vocab, seq int, published float64) TransformerShape {
	return TransformerShape{Name: name, Source: source, Stack: DecoderOnly,
		Layers: layers, Hidden: d, Heads: heads, KVHeads: kv, FFN: ffn, Activation: FFNSwiGLU, Vocab: vocab, SeqLen: seq,
		Positions: RotaryPositions, Norm: NormRMS, PreNorm: true, Published: published}
}

// bert returns a BERT shape of Devlin et al. 2019: the uncased WordPiece
// vocabulary of 30,522 tokens (google-research/bert, bert_config.json),
// its table padded to 30,528 rows as DeepLearningExamples' programs pad
// it (VocabMultiple),
// 512 learned positions, 2 segment types, post-norm LayerNorm with one
// after the embeddings, biases, GELU with f = 4d, dropout, the pooler;
// the masked-language-model logits use the tied embedding; queries, keys
// and values are three products (SplitQKV), attention's scaling and
// padding mask kernels of their own (ScoreKernels). The
// pre-training heads' transform layer, output bias and next-sentence
// classifier (about 1.1 M parameters for BERT-large) are left out, as in
// the published counts.
func bert(name string, layers, d, heads int, published float64) TransformerShape {
	return TransformerShape{Name: name, Source: "Devlin et al. 2019, Section 3", Stack: EncoderOnly,
		Layers: layers, Hidden: d, Heads: heads, FFN: 4 * d, Activation: FFNGELU, Vocab: 30522, VocabMultiple: 8, SeqLen: 512, TokenTypes: 2,
		Positions: LearnedPositions, TiedEmbeddings: true, Norm: NormLayer, EmbeddingNorm: true, Bias: true, Pooler: true,
		Dropout: true, SplitQKV: true, ScoreKernels: true, Published: published}
}

// bertSQuAD returns a BERT shape of bert fine-tuned for SQuAD as Hugging
// Face's BertForQuestionAnswering and NVIDIA's DeepLearningExamples
// (PyTorch/LanguageModeling/BERT/modeling.py, BertForQuestionAnswering)
// build it: the encoder without its pooler, whose output the span head
// does not read (DeepLearningExamples' run_squad.py leaves the pooler's
// parameters out of the optimizer: "hack to remove pooler, which is not
// used"), and the span head over sequences of 384 tokens (run_squad.sh's
// max_seq_length). Published is Devlin et al.'s count, pooler included.
func bertSQuAD(name string, layers, d, heads int, published float64) TransformerShape {
	t := bert(name, layers, d, heads, published)
	t.Source = "Devlin et al. 2019, Sections 3 and 4.2"
	t.MaxPositions, t.SeqLen = 512, 384
	t.Pooler, t.SpanHead = false, true
	return t
}

// fairseq returns a Transformer for translation of Vaswani et al. 2017 as
// fairseq builds it for MLPerf: 6 + 6 layers, ReLU, sinusoidal positions,
// one token table of MLPerf's 33,708-token vocabulary shared by both
// stacks and the output projection, biases, dropout; SeqLen 32 is the
// sentence length attention spans (the profile's activation estimate).
// The loss is the label-smoothed cross-entropy of fairseq's translation
// scripts (--criterion label_smoothed_cross_entropy), which
// engine/torchbench's transformer-base computes too (F.cross_entropy with
// label_smoothing 0.1). Its table has the vocabulary's 33,708 rows, as
// engine/torchbench's nn.Embedding has; fairseq's own programs pad it
// (transformerBig).
func fairseq(name string, d, heads, ffn int, preNorm bool, published float64) TransformerShape {
	return TransformerShape{Name: name, Source: "Vaswani et al. 2017, Table 3; fairseq transformer_wmt_en_de", Stack: EncoderDecoder,
		Layers: 6, DecoderLayers: 6, Hidden: d, Heads: heads, FFN: ffn, Activation: FFNReLU, Vocab: 33708, SeqLen: 32,
		Positions: SinusoidalPositions, TiedEmbeddings: true, Norm: NormLayer, PreNorm: preNorm, Bias: true, Dropout: true,
		LabelSmoothing: true, Published: published}
}

// transformerBig returns the Transformer (big) of
// transformer_wmt_en_de_big_t2t as NVIDIA's DeepLearningExamples trains
// it, whose published throughputs validate compares with
// (PyTorch/Translation/Transformer/fairseq at commit 729963dd,
// models/transformer.py and modules/multihead_attention.py): pre-norm;
// relu_dropout 0.1 after the feed-forward block's ReLU besides dropout
// and attention_dropout 0.1; embeddings scaled by √d with the positions
// added and dropped out; attention's softmax and dropout in float32 under
// autocast between its two 16-bit products.
func transformerBig() TransformerShape {
	t := fairseq("transformer-big", 1024, 16, 4096, true, 213e6)
	t.FFNDropout, t.ScaledEmbeddings, t.Float32Softmax = true, true, true
	t.VocabMultiple = 8 // fairseq's dictionary, 33,712 rows
	return t
}

// transformerShapes are the shipped shapes, with the parameter counts
// their sources publish.
var transformerShapes = []TransformerShape{
	gpt3("gpt3-125m", 12, 768, 12, 125e6),
	gpt3("gpt3-350m", 24, 1024, 16, 350e6),
	gpt3("gpt3-760m", 24, 1536, 16, 760e6),
	// Table 2.1 gives 24 heads of 128 for d = 2048, which do not tile
	// the width; 16 heads of 128 do, and the parameters do not depend on
	// the split.
	gpt3("gpt3-1.3b", 24, 2048, 16, 1.3e9),
	gpt3("gpt3-2.7b", 32, 2560, 32, 2.7e9),
	gpt3("gpt3-6.7b", 32, 4096, 32, 6.7e9),
	// Table 2.1 gives d = 5140 with 40 heads of 128; 40 × 128 = 5120.
	gpt3("gpt3-13b", 40, 5120, 40, 13e9),
	gpt3("gpt3-175b", 96, 12288, 96, 175e9),
	// Touvron et al. 2023 ("Llama 2"), Table 1 (context 4,096, GQA for
	// 70B); widths from meta-llama's config.json files (hidden_size,
	// intermediate_size, num_key_value_heads, vocab_size 32,000).
	llama("llama2-7b", "Touvron et al. 2023 (Llama 2), Table 1; 6.74 B on the model card", 32, 4096, 32, 0, 11008, 32000, 4096, 6.74e9),
	llama("llama2-13b", "Touvron et al. 2023 (Llama 2), Table 1", 40, 5120, 40, 0, 13824, 32000, 4096, 13e9),
	llama("llama2-70b", "Touvron et al. 2023 (Llama 2), Table 1", 80, 8192, 64, 8, 28672, 32000, 4096, 70e9),
	// Llama Team 2024 ("The Llama 3 Herd of Models"), Table 3 (layers,
	// widths, heads, KV heads 8, vocabulary 128,000 + 256 special tokens
	// in config.json), pre-training sequences of 8,192 tokens (Section
	// 3.4.1); 8.03 B and 70.6 B on the model cards.
	llama("llama3-8b", "Llama Team 2024 (Llama 3), Table 3; 8.03 B on the model card", 32, 4096, 32, 8, 14336, 128256, 8192, 8.03e9),
	llama("llama3-70b", "Llama Team 2024 (Llama 3), Table 3; 70.6 B on the model card", 80, 8192, 64, 8, 28672, 128256, 8192, 70.6e9),
	llama("llama3-405b", "Llama Team 2024 (Llama 3), Table 3", 126, 16384, 128, 8, 53248, 128256, 8192, 405e9),
	mixtral8x7b(),
	bert("bert-base", 12, 768, 12, 110e6),
	bert("bert-large", 24, 1024, 16, 340e6),
	bertSQuAD("bert-base-squad", 12, 768, 12, 110e6),
	bertSQuAD("bert-large-squad", 24, 1024, 16, 340e6),
	fairseq("transformer-base", 512, 8, 2048, false, 65e6),
	transformerBig(),
}

// mixtral8x7b returns Mixtral 8x7B: Jiang et al. 2024 ("Mixtral of
// Experts"), Table 1 (Mistral 7B's layers with 8 SwiGLU experts, top 2,
// context 32,768); "46.7B total parameters but only uses 12.9B
// parameters per token" (mistral.ai/news/mixtral-of-experts). The router
// has no bias; routing is dropless.
func mixtral8x7b() TransformerShape {
	m := llama("mixtral-8x7b", "Jiang et al. 2024, Table 1; mistral.ai/news/mixtral-of-experts", 32, 4096, 32, 8, 14336, 32000, 32768, 46.7e9)
	m.Experts, m.TopK, m.PublishedActive = 8, 2, 12.9e9
	return m
}

// TransformerShapes returns the shipped transformer shapes, in the order
// above (GPT-3, Llama 2, Llama 3, Mixtral, BERT, the translation
// Transformers).
func TransformerShapes() []TransformerShape {
	return append([]TransformerShape(nil), transformerShapes...)
}

// LookupTransformer returns the shipped shape called name.
func LookupTransformer(name string) (TransformerShape, error) {
	for _, t := range transformerShapes {
		if t.Name == name {
			return t, nil
		}
	}
	names := make([]string, len(transformerShapes))
	for i, t := range transformerShapes {
		names[i] = t.Name
	}
	return TransformerShape{}, fmt.Errorf("no transformer shape %q (valid: %s)", name, strings.Join(names, ", "))
}
