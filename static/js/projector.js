// The discussion page on a projector: full screen on a click, and the arrow keys
// step to the previous or next exercise (the links that name their key).
(function () {
  document.addEventListener("click", (event) => {
    if (!event.target.closest("[data-fullscreen]")) return;
    if (document.fullscreenElement) document.exitFullscreen();
    else document.documentElement.requestFullscreen?.();
  });
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || event.target.matches("input, textarea, select")) return;
    const link = document.querySelector(`a[data-key="${event.key}"]`);
    if (link) link.click();
  });
})();
