#pragma once
// For the docs' pictures of Try It's explanations (plexus --try-it --checkpoint C --explain M
// --screenshot F): waits until the page shows them for its checkpoint and input, then calls
// `ready`. A picture's or typed text's heat map by method `method` (a --method name of
// `plexus-cli explain`; empty: the default); for a text project, `prompt` is typed, Generate
// pressed, and the samples and the prompt's attention maps awaited. `failed` gets why not.
#include <QString>
#include <functional>

namespace plexus::app {

class MainWindow;

void whenExplanationsShown(MainWindow& window, const QString& method, const QString& prompt,
                           std::function<void()> ready, std::function<void(const QString&)> failed);

}  // namespace plexus::app
