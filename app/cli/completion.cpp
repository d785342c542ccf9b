#include "cli/command.h"

#include <cstdio>
#include <string>
#include <vector>

namespace plexus::cli {
namespace {

constexpr const char* kCompletionHelp = R"(  Prints a script that makes SHELL complete plexus-cli's command line: the commands, each
  command's options, the choices of an option that has a few (--device cpu/cuda, --optimizer,
  ...) and file names for paths. Only bash is known. Installed, it lies in
  share/bash-completion/completions/plexus-cli, where bash-completion finds it; else add
    source <(plexus-cli completion bash)
  to ~/.bashrc.
)";

// `words` for a single-quoted shell string.
std::string quoted(const std::vector<std::string>& words) {
  std::string out = "'";
  for (const std::string& w : words) {
    if (out.size() > 1) out += ' ';
    for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

// The bash script: one `case` arm per command of the table, with its options, which of them
// take paths, and the choices of those that list some.
std::string bash_script() {
  std::vector<std::string> names{"--help", "--man", "--version"};
  std::string arms, values;
  for (const Command& c : commands()) {
    names.push_back(c.name);
    const ArgsShape shape = shape_of(c);
    std::vector<std::string> options = shape.flags, paths, texts;
    for (const ValueOption& o : shape.options) {
      options.push_back(o.name);
      (o.takes == Takes::Path ? paths : texts).push_back(o.name);
      if (!o.choices.empty()) values += "    '" + c.name + " " + o.name + "') words=" + quoted(o.choices) + " ;;\n";
    }
    const std::string positional = shape.max_positional == 0        ? "''"
                                   : shape.positional_choices.empty() ? "files"
                                                                      : quoted(shape.positional_choices);
    arms += "    " + c.name + ") options=" + quoted(options) + " paths=" + quoted(paths) + " texts=" + quoted(texts) +
            " positional=" + positional + " ;;\n";
  }
  return R"(# bash completion for plexus-cli, written by `plexus-cli completion bash` from its command table.
_plexus_cli() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  COMPREPLY=()
  if ((COMP_CWORD == 1)); then
    COMPREPLY=($(compgen -W )" + quoted(names) + R"( -- "$cur"))
    return 0
  fi
  local options paths texts positional words
  case ${COMP_WORDS[1]} in
)" + arms + R"(    *) return 0 ;;
  esac
  # The value of an option: one of its choices, a file for a path, else nothing to offer.
  case "${COMP_WORDS[1]} $prev" in
)" + values + R"(  esac
  if [[ -n $words ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  elif [[ " $paths " == *" $prev "* ]]; then
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -f -- "$cur"))
  elif [[ " $texts " == *" $prev "* ]]; then
    return 0
  elif [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
  elif [[ $positional == files ]]; then
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -f -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$positional" -- "$cur"))
  fi
  return 0
}
complete -F _plexus_cli plexus-cli
)";
}

int cmd_completion(const Args& args) {
  if (args.positional().empty()) throw UsageError{"completion needs a SHELL: bash"};
  const std::string& shell = args.positional()[0];
  if (shell != "bash") throw UsageError{"completion knows bash only, not '" + shell + "'"};
  const std::string script = bash_script();
  std::fwrite(script.data(), 1, script.size(), stdout);
  return 0;
}

}  // namespace

Command completion_command() {
  return {"completion", "completion SHELL", "print the shell completion script (SHELL: bash)",
          [] { return std::string(kCompletionHelp); }, {{}, {}, 1, {}, {"bash"}}, cmd_completion};
}

}  // namespace plexus::cli
