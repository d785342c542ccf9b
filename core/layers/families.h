#pragma once
// The families of layer types, one file each in core/layers/, each adding its entries (schema
// and lowering, layers/layer.h) in palette order. families.cpp calls them, in this order.
#include "layers/layer.h"

namespace plexus::layers {

void add_data_layers(Registrar& r);           // data.cpp: Input
void add_dense_layers(Registrar& r);          // dense.cpp: Linear, Embedding
void add_reshape_layers(Registrar& r);        // reshape.cpp: Flatten, Reshape, Permute, Squeeze, Unsqueeze
void add_split_layers(Registrar& r);          // split.cpp: Split, Chunk, Slice
void add_reduce_layers(Registrar& r);         // reduce.cpp: Mean, Sum
void add_dropout_layers(Registrar& r);        // dropout.cpp: Dropout, Dropout2d
void add_conv_layers(Registrar& r);           // conv.cpp: Conv2d, Conv1d, ConvTranspose2d, MaxPool2d,
                                              //   AvgPool2d, MaxPool1d, AvgPool1d, AdaptiveMaxPool2d,
                                              //   AdaptiveAvgPool2d
void add_resample_layers(Registrar& r);       // resample.cpp: Upsample, ZeroPad2d
void add_norm_layers(Registrar& r);           // norm.cpp: BatchNorm1d, BatchNorm2d, LayerNorm, GroupNorm,
                                              // InstanceNorm2d, RMSNorm
void add_recurrent_layers(Registrar& r);      // recurrent.cpp: LSTM, GRU, RNN
void add_sequence_layers(Registrar& r);       // sequence.cpp: SequenceLengths, SequencePool
void add_attention_layers(Registrar& r);      // attention.cpp: MultiheadAttention, PositionalEmbedding
void add_activation_layers(Registrar& r);     // activation.cpp: ReLU, LeakyReLU, PReLU, ELU, SELU, Sigmoid,
                                              // Tanh, GELU, SiLU, Mish, Softplus, Hardswish, Hardsigmoid,
                                              // Softmax, LogSoftmax, Identity
void add_merge_layers(Registrar& r);          // merge.cpp: Add, Mul, Sub, Concat
void add_loss_layers(Registrar& r);           // loss.cpp: CrossEntropy, MSE, BCEWithLogits

}  // namespace plexus::layers
