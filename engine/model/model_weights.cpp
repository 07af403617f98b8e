#include "engine/model/model_weights.h"

namespace sluice {

const WeightTensor* LayerWeights::slot(WeightRole role) const {
  return const_cast<LayerWeights*>(this)->slot(role);
}

WeightTensor* LayerWeights::slot(WeightRole role) {
  switch (role) {
    case WeightRole::AttnNorm:
      return &attn_norm;
    case WeightRole::Wq:
      return &wq;
    case WeightRole::Wk:
      return &wk;
    case WeightRole::Wv:
      return &wv;
    case WeightRole::Bq:
      return &bq;
    case WeightRole::Bk:
      return &bk;
    case WeightRole::Bv:
      return &bv;
    case WeightRole::QNorm:
      return &q_norm;
    case WeightRole::KNorm:
      return &k_norm;
    case WeightRole::Wo:
      return &wo;
    case WeightRole::PostAttnNorm:
      return &post_attn_norm;
    case WeightRole::FfnNorm:
      return &ffn_norm;
    case WeightRole::Gate:
      return &w_gate;
    case WeightRole::Up:
      return &w_up;
    case WeightRole::Down:
      return &w_down;
    case WeightRole::PostFfnNorm:
      return &post_ffn_norm;
    default:
      return nullptr;
  }
}

const WeightTensor* ModelWeights::slot(WeightRole role) const {
  switch (role) {
    case WeightRole::TokenEmbedding:
      return &token_embedding;
    case WeightRole::FinalNorm:
      return &final_norm;
    case WeightRole::LmHead:
      return &lm_head;
    default:
      return nullptr;
  }
}

}  // namespace sluice
