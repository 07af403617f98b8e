#include "ui/setup/run_spec.h"

#include "ui/setup/dataset_panel.h"
#include "ui/setup/parameters_panel.h"

namespace sluice::ui {

sluice::GenerationSpec specFromPanels(const QString& modelPath, const QString& tokenizerPath,
                                      const DatasetPanel& dataset,
                                      const ParametersPanel& parameters) {
  GenerationSpec spec;
  spec.model_path = modelPath.toStdString();
  spec.tokenizer_path = tokenizerPath.toStdString();
  spec.input_path = dataset.datasetPath().toStdString();
  spec.format = dataset.format();
  spec.prompt = dataset.promptOptions();
  spec.on_bad_row = dataset.onBadRow();
  parameters.applyToSpec(spec);
  if (spec.remote.is_remote()) {  // the servers run their own model: none is loaded here
    spec.model_path.clear();
    spec.tokenizer_path.clear();
  }
  return spec;
}

}  // namespace sluice::ui
