// DescriptionFile — the TOML files that describe a model or a machine, and the same
// settings given on a command line. A file is one flat table: `preset = "NAME"` (the
// description it starts from; none: it starts empty) and any of the description's keys,
// each of one declared type (a Table is an array of rows of numbers, `[[1, 2], [3, 4]]`,
// on a command line too). Every problem is located at the line and column of the key or
// value at fault. Read with toml++ (Debian's libtomlplusplus-dev), compiled in
// DescriptionFile.cpp only.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace schedc::cost {

enum class SettingType { Integer, Number, Boolean, Text, Table };

// A value of a key, as its type reads it (a Number key also takes an integer).
struct Setting {
  int64_t integer = 0;
  double number = 0;
  bool boolean = false;
  std::string text;
  std::vector<std::vector<double>> rows;
};

struct FileProblem {
  int line = 0, column = 0; // 0: the file as a whole
  std::string message;
};

// A key of a description of type T: the member an Integer (at least 1), Boolean or Number
// (at least 0, times `scale`: a file's GB/s are bytes/s) key sets, or a function that sets
// it and says what is wrong ("" when nothing is).
template <class T> struct Key {
  std::string_view name;
  SettingType type;
  int64_t T::*integer = nullptr;
  bool T::*boolean = nullptr;
  double T::*number = nullptr;
  double scale = 1;
  std::string (*set)(T &, const Setting &) = nullptr;
};

// One key of a file with its value and where it is.
struct FileSetting {
  std::string key;
  Setting value;
  int line = 0, column = 0;
};

// The keys and their types, for readSettings (which knows nothing of T).
struct KeyType {
  std::string_view name;
  SettingType type;
};

// The settings of `text` (`preset` first when given), each of its key's type; nullopt with
// `problem` set on a syntax error, an unknown key or a value of the wrong type.
std::optional<std::vector<FileSetting>> readSettings(const std::string &text, const std::vector<KeyType> &keys,
                                                     FileProblem &problem);

// `value` as command-line text reads as a `type` ("80", "0.7", "true", "rmsnorm"); nullopt
// with `wrong` set when it does not.
std::optional<Setting> settingFromText(std::string_view key, SettingType type, const std::string &value,
                                       std::string &wrong);

// The preset named `name` among `presets` (null: none), and "a, b, ...": their names.
template <class T> const T *findNamed(const std::vector<T> &presets, const std::string &name) {
  for (const T &p : presets)
    if (p.name == name)
      return &p;
  return nullptr;
}
template <class T> std::string namesOf(const std::vector<T> &presets) {
  std::string names;
  for (const T &p : presets)
    names += (names.empty() ? "" : ", ") + p.name;
  return names;
}

// "layers, hidden, ...": the names of `keys`.
template <class T> std::string keyNames(std::span<const Key<T>> keys) {
  std::string names;
  for (const Key<T> &k : keys)
    names += (names.empty() ? "" : ", ") + std::string(k.name);
  return names;
}

// Sets `key` of `target` from `s`; "" or what is wrong.
template <class T> std::string applySetting(T &target, const Key<T> &key, const Setting &s) {
  if (key.set)
    return key.set(target, s);
  if (key.integer) {
    if (s.integer < 1)
      return std::string(key.name) + " is " + std::to_string(s.integer) + "; it must be at least 1";
    target.*key.integer = s.integer;
  } else if (key.boolean) {
    target.*key.boolean = s.boolean;
  } else if (key.number) {
    if (!(s.number >= 0))
      return std::string(key.name) + " is " + std::to_string(s.number) + "; it must not be negative";
    target.*key.number = s.number * key.scale;
  }
  return "";
}

// The description `text` gives: the preset `findPreset` returns for its `preset` key (or a
// default T), then its other keys in turn; nullopt with `problem` set.
template <class T>
std::optional<T> readDescription(const std::string &text, std::span<const Key<T>> keys,
                                 const T *(*findPreset)(const std::string &), const std::string &presetNames,
                                 FileProblem &problem) {
  std::vector<KeyType> types{{"preset", SettingType::Text}};
  for (const Key<T> &k : keys)
    types.push_back({k.name, k.type});
  std::optional<std::vector<FileSetting>> settings = readSettings(text, types, problem);
  if (!settings)
    return std::nullopt;
  T target{};
  for (const FileSetting &s : *settings) {
    if (s.key == "preset") {
      const T *base = findPreset(s.value.text);
      if (!base) {
        problem = {s.line, s.column, "unknown preset `" + s.value.text + "` (presets: " + presetNames + ")"};
        return std::nullopt;
      }
      target = *base;
      continue;
    }
    for (const Key<T> &k : keys)
      if (k.name == s.key)
        if (std::string wrong = applySetting(target, k, s.value); !wrong.empty()) {
          problem = {s.line, s.column, wrong};
          return std::nullopt;
        }
  }
  return target;
}

// Sets `key` of `target` from command-line text; "" or what is wrong (`what` names the
// description in the message: "model", "hardware").
template <class T>
std::string setFromText(T &target, std::span<const Key<T>> keys, const std::string &key, const std::string &value,
                        const char *what) {
  for (const Key<T> &k : keys)
    if (k.name == key) {
      std::string wrong;
      std::optional<Setting> s = settingFromText(k.name, k.type, value, wrong);
      return s ? applySetting(target, k, *s) : wrong;
    }
  return std::string("unknown ") + what + " key `" + key + "` (keys: " + keyNames(keys) + ")";
}

} // namespace schedc::cost
