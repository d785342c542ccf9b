// Every family, called once when graph::Registry is first used. An explicit list rather than
// self-registering static objects: plexus_core is a static library, and a linker keeps only the
// objects something references, so a family file that only constructed a registrar would
// silently vanish from the programs; the list also fixes the palette's order, which static
// initialisation across files would not.
#include "layers/families.h"

namespace plexus::graph {

void add_layer_types(Registry& registry) {
  layers::Registrar r(registry);
  layers::add_data_layers(r);
  layers::add_dense_layers(r);
  layers::add_reshape_layers(r);
  layers::add_split_layers(r);
  layers::add_reduce_layers(r);
  layers::add_dropout_layers(r);
  layers::add_conv_layers(r);
  layers::add_resample_layers(r);
  layers::add_norm_layers(r);
  layers::add_recurrent_layers(r);
  layers::add_sequence_layers(r);
  layers::add_attention_layers(r);
  layers::add_activation_layers(r);
  layers::add_merge_layers(r);
  layers::add_loss_layers(r);
}

}  // namespace plexus::graph
