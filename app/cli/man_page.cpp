// `plexus-cli --man`: the manual page, written from the command table (command.h) so that it
// says what --help says. The build writes it to plexus-cli.1 (app/CMakeLists.txt).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string>

#include "cli/command.h"
#include "session/run_log.h"

namespace plexus::cli {
namespace {

// `text` as roff prints it: backslashes and minus signs escaped, a line starting with a '.' or
// '\'' kept from reading as a request, and every character beyond ASCII (the help's "×", "≥")
// as its \[uXXXX] escape: troff reads its input as Latin-1, not UTF-8.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c >= 0x80) {
      // A UTF-8 sequence: its lead byte says how many continuation bytes follow.
      const int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
      uint32_t code = c & (0x3F >> extra);
      for (int k = 0; k < extra && i + 1 < text.size(); ++k) code = (code << 6) | (static_cast<unsigned char>(text[++i]) & 0x3F);
      char escape[16];
      std::snprintf(escape, sizeof escape, "\\[u%04X]", code);
      out += escape;
    } else {
      out += char(c);
    }
    line_start = c == '\n';
  }
  return out;
}

// Text kept as it is laid out (the help's columns), in a no-fill block.
std::string verbatim(const std::string& text) {
  return ".nf\n" + roff(text) + (text.ends_with('\n') ? "" : "\n") + ".fi\n";
}

}  // namespace

std::string man_page() {
  // "Headless front end for ...": NAME's line is the description, without its capital and period.
  std::string what = kDescription;
  while (!what.empty() && (what.back() == '\n' || what.back() == '.')) what.pop_back();
  if (!what.empty()) what[0] = char(std::tolower(static_cast<unsigned char>(what[0])));
  std::string page = ".TH PLEXUS\\-CLI 1 \"\" \"" + roff("plexus-cli " PLEXUS_VERSION) + "\" \"User Commands\"\n";
  page += ".SH NAME\nplexus\\-cli \\- " + roff(what) + "\n";
  page += ".SH SYNOPSIS\n" + verbatim(kCallForms);
  page += ".SH DESCRIPTION\n" + roff(kDescription) + ".PP\n" +
          roff("Each command below says what it does and takes; plexus-cli COMMAND --help prints the same.\n");
  page += ".SH COMMANDS\n";
  for (const Command& c : commands()) {
    page += ".SS " + roff(c.name) + "\n";
    // Each form as it is typed; a form's continuation lines aligned under it.
    std::string synopsis;
    for (size_t at = 0; at < c.synopsis.size();) {
      const size_t end = std::min(c.synopsis.find('\n', at), c.synopsis.size());
      const std::string line = c.synopsis.substr(at, end - at);
      synopsis += std::string(synopsis.empty() ? "" : "\n") + (line.starts_with(c.name) ? "plexus-cli " : "           ") + line;
      at = end + 1;
    }
    page += ".nf\n\\fB" + roff(synopsis) + "\\fR\n.fi\n";
    page += ".PP\n" + roff(c.summary) + ".\n.PP\n" + verbatim(c.help());
  }
  page += ".SH \"EXIT STATUS\"\n" + roff(kExitStatus);
  // The files `train --save-run` leaves and eval, predict, sample and export read.
  page += ".SH FILES\n.TP\n.I " + roff("<project folder>/<name>.runs/<date-time>/") + "\n" +
          roff(std::string("a kept run (train --save-run or --run-dir): best.safetensors and final.safetensors, "
                           "run checkpoints with the project inside; ") +
               session::kRunProjectFile + "; " + session::kRunLogFile + ", a header line then every event.\n");
  page += ".SH \"SEE ALSO\"\n.BR plexus (1)\n";
  return page;
}

}  // namespace plexus::cli
