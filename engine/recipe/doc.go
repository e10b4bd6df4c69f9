// Package recipe turns a training recipe of the model profiles
// (model.Recipe: optimizer, batch, devices, schedule, epochs and the
// accuracy target) into a configuration of scaleplan's reference engine
// (engine/dist), so that `scaleplan bench train` trains what the profiles
// describe. It is the one engine package that reads the model profiles;
// engine/dist knows only its own networks and settings.
package recipe
