/* Text from the data for Plotly (trace names, legends, ticks, hover, annotations): Plotly renders a
   subset of HTML there and treats $...$ as TeX, so both are escaped. Only entities Plotly decodes are
   used (&amp; &lt; &gt; and numeric ones): it leaves &quot; as it is, and a legend showed `&quot;`. */
function plotlyText(text) {
  return String(text === null || text === undefined ? '(none)' : text)
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
    .replace(/\$/g, '&#36;').replace(/"/g, '&#34;');
}
