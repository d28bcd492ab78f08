//! The page: inline CSS and JS, no external resource. The run's data goes in one JSON block (`DATA`
//! below is replaced by it); the script builds the rows from it, every text through `textContent`, so
//! nothing in a model's output is ever parsed as markup.

/// Replaced by the run's data (a JSON object whose `<`, `>` and `&` are escaped).
pub const DATA_MARK: &str = "/*DATA*/";

/// The tag that opens the data block.
pub const DATA_OPEN: &str = r#"<script id="data" type="application/json">"#;

/// Replaced by [`MEDIA_VIEW`] when a record has media, else by nothing: a page without media is the
/// page it was before media.
pub const MEDIA_MARK: &str = "/*MEDIA*/";

/// A trial's media parts, under its prompt: each named, an image with its preview when the data has
/// one (`previews`, by SHA-256).
pub const MEDIA_VIEW: &str = r#"
    if(r.media&&r.media.length){var ml=el("ul","media");ml.style.margin="4px 0";r.media.forEach(function(m){var li=el("li");li.dataset.sha=m.sha256;var p=(data.previews||{})[m.sha256];if(p){var img=document.createElement("img");img.src=p;img.alt=m.name;img.className="preview";img.style.cssText="display:block;max-width:240px;max-height:160px;margin:4px 0;border:1px solid var(--line)";li.appendChild(img);}li.appendChild(document.createTextNode("{"+m.var+"} "+m.shown));ml.appendChild(li);});add(det,el("div","why","media"),ml);}"#;

/// The page, with [`DATA_MARK`] where the data goes.
pub const PAGE: &str = r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>prompt-tester report</title>
<style>
:root{--ok:#1a7f37;--bad:#cf222e;--err:#9a6700;--ign:#6e7781;--bg:#fff;--fg:#1f2328;--mute:#656d76;--line:#d0d7de;--soft:#f6f8fa;--mark:#fff8c5}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
header{padding:16px 20px;border-bottom:1px solid var(--line);background:var(--soft)}
h1{font-size:18px;margin:0 0 8px}
h2{font-size:15px;margin:18px 0 6px}
.counts{display:flex;flex-wrap:wrap;gap:8px;margin:6px 0}
.count{padding:4px 10px;border-radius:12px;border:1px solid var(--line);background:var(--bg);font-weight:600}
.count.passed{color:var(--ok)}.count.failed{color:var(--bad)}.count.errored{color:var(--err)}.count.ignored{color:var(--ign)}
dl.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:2px 16px;margin:8px 0 0}
dl.facts div{display:flex;gap:6px}dl.facts dt{color:var(--mute)}dl.facts dd{margin:0;font-variant-numeric:tabular-nums}
.controls{display:flex;flex-wrap:wrap;gap:10px;align-items:center;padding:10px 20px;border-bottom:1px solid var(--line);position:sticky;top:0;background:var(--bg);z-index:1}
.controls input[type=search]{flex:1 1 220px;padding:5px 8px;border:1px solid var(--line);border-radius:6px;font:inherit}
.controls label{white-space:nowrap}
main{padding:0 20px 40px}
.group h2{border-bottom:1px solid var(--line);padding-bottom:4px}
.group .cat{color:var(--mute);font-weight:normal}
.trial{border-bottom:1px solid var(--line)}
.row{display:grid;grid-template-columns:16px minmax(0,1fr) 130px 80px 90px 70px;gap:10px;align-items:center;padding:5px 4px;cursor:pointer}
.row:focus{outline:2px solid #0969da;outline-offset:-2px}
.row:hover{background:var(--soft)}
.dot{width:10px;height:10px;border-radius:50%}
.passed .dot{background:var(--ok)}.failed .dot{background:var(--bad)}.errored .dot{background:var(--err)}.ignored .dot,.live_only .dot{background:var(--ign)}
.name{overflow-wrap:anywhere;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:13px}
.num{text-align:right;font-variant-numeric:tabular-nums;color:var(--mute)}
svg.bar{width:130px;height:14px}
.detail{padding:6px 8px 12px 30px;background:var(--soft)}
.msg{color:var(--bad);white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:12px}
.sample{border:1px solid var(--line);border-radius:6px;background:var(--bg);padding:6px 10px;margin:8px 0}
.sample h3{font-size:13px;margin:0 0 4px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:4px 0;padding:6px 8px;background:var(--soft);border-radius:4px;font-size:12px;max-height:28em;overflow:auto}
mark.snippet{background:var(--mark);outline:1px solid #d4a72c}
ul.checks{margin:4px 0;padding-left:18px}
ul.checks li.ok::marker{color:var(--ok)}ul.checks li.no::marker{color:var(--bad)}
ol.steps{margin:4px 0;padding-left:24px}ol.steps li{margin:4px 0}
.q{font-weight:600}.advisory{color:var(--err);font-style:italic;margin-left:.4em}.why{color:var(--mute)}
table.extra{border-collapse:collapse;margin:6px 0 12px}
table.extra th,table.extra td{border:1px solid var(--line);padding:3px 8px;text-align:left;white-space:pre-wrap;vertical-align:top}
.empty{color:var(--mute);padding:16px 0}
@media (max-width:700px){.row{grid-template-columns:12px minmax(0,1fr) 90px}.row .num{display:none}svg.bar{width:90px}.detail{padding-left:8px}}
@media print{.controls{display:none}.detail{display:block!important}.row{cursor:auto}pre{max-height:none}header{background:none}}
</style>
</head>
<body>
<script id="data" type="application/json">/*DATA*/</script>
<header>
<h1>prompt-tester report</h1>
<div class="counts" id="counts"></div>
<dl class="facts" id="facts"></dl>
</header>
<div class="controls">
<input type="search" id="filter" placeholder="Filter by name ( / )" aria-label="Filter by name">
<label><input type="checkbox" id="failed-only"> failed only</label>
<span id="categories"></span>
<span class="num" id="shown"></span>
</div>
<main id="main"></main>
<script>
"use strict";
(function(){
var data=JSON.parse(document.getElementById("data").textContent);
var records=data.records||[];
function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;if(text!=null)e.textContent=String(text);return e;}
function add(p){for(var i=1;i<arguments.length;i++){var c=arguments[i];if(c!=null)p.appendChild(c);}return p;}
function usd(x){return "$"+(x<0.01&&x>0?x.toFixed(6):x.toFixed(4));}
function secs(x){return x==null?"":(x<1?Math.round(x*1000)+" ms":x.toFixed(2)+" s");}
function cost(t){var s=(t.bounded_calls?"\u2264":"")+usd(t.cost_usd||0);return t.unpriced_calls?s+" + "+t.unpriced_calls+" unpriced call"+(t.unpriced_calls>1?"s":""):s;}
function budget(b){if(!b)return null;var n=b.refused_calls;return (b.unknown?"spend unknown ("+b.unknown+")":usd(b.spent_usd)+" spent")+" of "+usd(b.limit_usd)+(b.whole_nextest_run?" (the whole nextest run)":"")+(n?"; "+n+" call"+(n>1?"s were":" was")+" not made for it":"");}
function group(r){if(r.case)return r.case.suite;var i=r.name.lastIndexOf("::");return i<0?"prompt_tests":r.name.slice(0,i);}
function category(r){return r.case?(r.case.category||"uncategorized"):"";}
var rank={failed:0,errored:1,passed:2,live_only:3,ignored:4};
var counts={passed:0,failed:0,errored:0,ignored:0};
var sum={subject:{calls:0,replayed:0,input_tokens:0,output_tokens:0,cost_usd:0,unpriced_calls:0,bounded_calls:0},judge:{calls:0,replayed:0,input_tokens:0,output_tokens:0,cost_usd:0,unpriced_calls:0,bounded_calls:0}};
records.forEach(function(r){
  counts[r.status==="live_only"?"ignored":r.status]++;
  ["subject","judge"].forEach(function(k){var u=r.usage[k];for(var f in sum[k])sum[k][f]+=u[f]||0;});
});
var counter=document.getElementById("counts");
["passed","failed","errored","ignored"].forEach(function(k){var c=el("span","count "+k);c.id="count-"+k;add(c,el("span","n",counts[k]),document.createTextNode(" "+k));counter.appendChild(c);});
var run=data.run||{};
var calls=sum.subject.calls+sum.judge.calls,replayed=sum.subject.replayed+sum.judge.replayed;
var facts=[["calls",calls+" ("+replayed+" replayed, "+(calls-replayed)+" live)"],
  ["tokens",(sum.subject.input_tokens+sum.judge.input_tokens)+" in / "+(sum.subject.output_tokens+sum.judge.output_tokens)+" out"],
  ["subject cost",cost(sum.subject)],["judge cost",cost(sum.judge)],
  ["wall time",secs(run.wall_secs)],["date",run.date],["commit",run.commit],["judge",run.judge||"none"],["cassettes",run.cassette_mode],["budget",budget(run.budget)]];
var dl=document.getElementById("facts");
facts.forEach(function(f){if(f[1]==null||f[1]==="")return;var d=el("div");d.dataset.fact=f[0];add(d,el("dt",null,f[0]),el("dd",null,f[1]));dl.appendChild(d);});
var main=document.getElementById("main");
function table(title,t){
  if(!t||!t.columns)return;var s=el("section","group extra");s.id=title.toLowerCase().replace(/\W+/g,"-");
  add(s,el("h2",null,t.title||title));var tb=el("table","extra"),tr=el("tr");
  t.columns.forEach(function(c){tr.appendChild(el("th",null,c));});tb.appendChild(tr);
  (t.rows||[]).forEach(function(row){var tr=el("tr");row.forEach(function(c){tr.appendChild(el("td",null,c));});tb.appendChild(tr);});
  s.appendChild(tb);main.appendChild(s);
}
table("Model matrix",data.matrix);table("Baseline comparison",data.baseline);table("Pending changes",data.pending);
function bar(r){
  var ns="http://www.w3.org/2000/svg",svg=document.createElementNS(ns,"svg");svg.setAttribute("class","bar");svg.setAttribute("viewBox","0 0 100 10");svg.setAttribute("preserveAspectRatio","none");
  function rect(x,w,fill){var e=document.createElementNS(ns,"rect");e.setAttribute("x",x);e.setAttribute("y",2);e.setAttribute("width",w);e.setAttribute("height",6);e.setAttribute("fill",fill);svg.appendChild(e);}
  rect(0,100,"#eaeef2");
  if(r.runs_total>0){var p=100*r.runs_passed/r.runs_total;rect(0,p,p>=100*r.pass_threshold?"#2da44e":"#cf222e");
    if(r.ci_low!=null){var l=document.createElementNS(ns,"path");l.setAttribute("d","M"+100*r.ci_low+" 5H"+100*r.ci_high+"M"+100*r.ci_low+" 2V8M"+100*r.ci_high+" 2V8");l.setAttribute("stroke","#1f2328");l.setAttribute("stroke-width","0.8");l.setAttribute("vector-effect","non-scaling-stroke");l.setAttribute("class","ci");svg.appendChild(l);}
    var tl=document.createElementNS(ns,"title");tl.textContent=r.runs_passed+"/"+r.runs_total+" passed"+(r.ci_low!=null?", 95% CI "+Math.round(100*r.ci_low)+"–"+Math.round(100*r.ci_high)+"%":"");svg.appendChild(tl);}
  return svg;
}
function highlighted(text,snippets){
  var pre=el("pre","output"),at=0,marks=[];
  snippets.forEach(function(s){if(!s)return;var i=text.indexOf(s);if(i>=0)marks.push([i,i+s.length]);});
  marks.sort(function(a,b){return a[0]-b[0];});
  marks.forEach(function(m){if(m[0]<at)return;pre.appendChild(document.createTextNode(text.slice(at,m[0])));pre.appendChild(el("mark","snippet",text.slice(m[0],m[1])));at=m[1];});
  pre.appendChild(document.createTextNode(text.slice(at)));return pre;
}
// One part of a transcript's message as text: what was said, a tool call, a tool's result.
function blockText(b){if(b.type==="text")return b.text;if(b.type==="tool_use")return "tool call: "+b.name+" "+JSON.stringify(b.input);if(b.type==="tool_result")return "tool result ("+b.name+(b.is_error?", error":"")+"): "+b.content;return JSON.stringify(b);}
// How far a judge answer is trusted: the judge's measurement on the question's type, or why it is advisory.
function trustView(j){var pc=function(x){return Math.round(x.value*100)+"% ("+x.successes+"/"+x.trials+")";};var t=[];
  if(j.measurement)t.push("judge measured on "+j.measurement.question_type+" questions: accuracy "+pc(j.measurement.accuracy)+(j.measurement.tpr?", TPR "+pc(j.measurement.tpr):"")+(j.measurement.tnr?", TNR "+pc(j.measurement.tnr):""));
  var a=j.advisory;if(a&&a.reason==="unmeasured")t.push(a.question_type?"advisory: this judge is not measured on "+a.question_type+" questions":"advisory: the judge gave no question type, and no measurement applies");
  if(a&&a.reason==="below_minimum")t.push("advisory: accuracy on "+a.question_type+" questions may be as low as "+(a.accuracy_low*100).toFixed(1)+"% (95% CI), below min_accuracy "+Math.round(a.min_accuracy*100)+"%");
  var agreed=function(v){return "the judge agreed with itself on "+v.agreeing+"/"+v.asked+" answers";};
  if(a&&a.reason==="low_agreement")t.push("advisory: "+agreed(a.votes)+", below min_agreement "+Math.round(a.min_agreement*100)+"%");
  else if(j.votes)t.push(agreed(j.votes));
  return t.length?el("div","why trust",t.join("; ")):null;}
// One model call of a sample's trajectory: its model, tokens and time, what went back to it, the tools it requested, its answer.
function stepView(c){var li=el("li","step");add(li,el("span","q",c.provider+"/"+c.model),el("span","why"," "+c.input_tokens+" in / "+c.output_tokens+" out tokens, "+secs(c.latency_ms/1000)+(c.replayed?", replayed":"")));
  (c.sent_back||[]).forEach(function(b){li.appendChild(el("div","sent-back","sent back "+(b.name||b.id||"tool")+": "+b.content));});
  (c.requested||[]).forEach(function(t){li.appendChild(el("div","requested","requested "+t.name+"("+JSON.stringify(t.arguments)+")"));});
  if(c.answer)li.appendChild(el("pre","answer",c.answer));return li;}
function sampleView(r,s){
  var d=el("div","sample "+s.status);d.dataset.run=s.run;
  add(d,el("h3",null,"run "+s.run+" of "+r.runs_total+": "+s.status+(s.replayed?" (replayed)":"")+(s.latency!=null?", "+secs(s.latency):"")));
  if(s.message)d.appendChild(el("div","msg",s.message));
  var judge=s.judge||[];
  if(s.output!=null){add(d,el("div","why","output"),highlighted(s.output,judge.map(function(j){return j.snippet;})));}
  if(s.assertions&&s.assertions.length){var ul=el("ul","checks");s.assertions.forEach(function(a){var li=el("li",a.passed?"ok":"no");add(li,el("span","q",a.kind+" "),el("span","why",a.at),a.message?el("div",null,a.message):null);ul.appendChild(li);});add(d,el("div","why","assertions"),ul);}
  if(judge.length){var uj=el("ul","checks judge");judge.forEach(function(j){var li=el("li",j.passed?"ok":"no");add(li,el("span","q",j.question),document.createTextNode(" "+j.answer),j.advisory?el("span","advisory","advisory"):null,j.reasoning?el("div","why",j.reasoning):null,j.snippet?el("div",null,"quoted: \u201c"+j.snippet+"\u201d"):null,trustView(j));uj.appendChild(li);});add(d,el("div","why","judge"),uj);}
  if(s.steps&&s.steps.length){var ol=el("ol","steps");s.steps.forEach(function(c){ol.appendChild(stepView(c));});add(d,el("div","why","steps"),ol);}
  if(s.tool_calls&&s.tool_calls.length){add(d,el("div","why","tool calls"),el("pre","tools",s.tool_calls.map(function(t){return t.name+" "+JSON.stringify(t.input!==undefined?t.input:t.arguments);}).join("\n")));}
  if(s.transcript&&s.transcript.length){add(d,el("div","why","transcript"),el("pre","transcript",s.transcript.map(function(m){return "["+m.role+"] "+(typeof m.content==="string"?m.content:m.content.map(blockText).join("\n"));}).join("\n\n")));}
  return d;
}
function open(t,r){
  var det=t.querySelector(".detail");
  if(det){det.hidden=!det.hidden;}else{
    det=el("div","detail");var samples=r.samples||[];
    // A one-sample trial's message is its sample's: shown once, with the sample.
    if(r.message&&!(samples.length===1&&samples[0].message===r.message))det.appendChild(el("div","msg",r.message));
    if(r.prompt!=null)add(det,el("div","why","prompt"),el("pre","prompt",r.prompt));/*MEDIA*/
    samples.slice().sort(function(a,b){return (a.status==="passed")-(b.status==="passed")||a.run-b.run;}).forEach(function(s){det.appendChild(sampleView(r,s));});
    // A gate's samples are its rows: failing ones first, each with its own samples.
    if(r.gate){var g=r.gate;
      add(det,el("div","why gate-counts",r.runs_passed+"/"+r.runs_total+" rows passed, need "+r.runs_required+" (pass threshold "+Math.round(1000*r.pass_threshold)/10+"%)"+(g.rows_skipped?", "+g.rows_skipped+" rows skipped (not counted)":"")));
      g.rows.slice().sort(function(a,b){return (a.status==="passed")-(b.status==="passed");}).forEach(function(row){
        var d=el("div","sample gate-row "+row.status);d.dataset.row=row.case_id;
        add(d,el("h3",null,"row "+row.case_id+": "+row.status));if(row.message)d.appendChild(el("div","msg",row.message));
        (row.samples||[]).forEach(function(s){d.appendChild(sampleView(row,s));});det.appendChild(d);});}
    t.appendChild(det);}
  t.firstChild.setAttribute("aria-expanded",String(!det.hidden));
}
var groups={},order=[];
records.forEach(function(r){var g=group(r)+"\u0000"+category(r);if(!groups[g]){groups[g]=[];order.push(g);}groups[g].push(r);});
function worst(g){return Math.min.apply(null,groups[g].map(function(r){return rank[r.status];}));}
order.sort(function(a,b){return worst(a)-worst(b)||(a<b?-1:1);});
var rows=[],cats={};
order.forEach(function(g){
  var parts=g.split("\u0000"),sec=el("section","group");sec.dataset.category=parts[1];
  var h=el("h2",null,parts[0]+" ");if(parts[1])h.appendChild(el("span","cat",parts[1]));sec.appendChild(h);
  if(parts[1])cats[parts[1]]=1;
  groups[g].sort(function(a,b){return rank[a.status]-rank[b.status]||(a.name<b.name?-1:1);}).forEach(function(r){
    var t=el("div","trial "+r.status);t.dataset.name=r.name;t.dataset.status=r.status;
    var row=el("div","row");row.tabIndex=0;row.setAttribute("role","button");row.setAttribute("aria-expanded","false");
    var u=r.usage,tok=u.subject.input_tokens+u.subject.output_tokens+u.judge.input_tokens+u.judge.output_tokens;
    var c=(u.subject.cost_usd||0)+(u.judge.cost_usd||0),unp=u.subject.unpriced_calls+u.judge.unpriced_calls;
    add(row,el("span","dot"),el("span","name",r.name),bar(r),el("span","num cost",unp?"unpriced":(u.subject.bounded_calls||u.judge.bounded_calls?"\u2264":"")+usd(c)),el("span","num",tok+" tok"),el("span","num",secs(r.duration)));
    row.title=r.status+(r.runs_total?": "+r.runs_passed+"/"+r.runs_total+(r.gate?" rows passed":" samples passed"):"");
    row.addEventListener("click",function(){open(t,r);});
    row.addEventListener("keydown",function(e){if(e.key==="Enter"||e.key===" "){e.preventDefault();open(t,r);}});
    t.appendChild(row);sec.appendChild(t);rows.push({t:t,r:r,sec:sec});
  });
  main.appendChild(sec);
});
if(!records.length)main.appendChild(el("p","empty","No trials ran."));
var catBox=document.getElementById("categories"),off={};
Object.keys(cats).sort().forEach(function(c){var l=el("label"),i=el("input");i.type="checkbox";i.checked=true;i.dataset.category=c;i.addEventListener("change",function(){off[c]=!i.checked;apply();});add(l,i,document.createTextNode(" "+c));catBox.appendChild(l);catBox.appendChild(document.createTextNode(" "));});
var filter=document.getElementById("filter"),failedOnly=document.getElementById("failed-only");
function apply(){
  var q=filter.value.toLowerCase(),fo=failedOnly.checked,n=0,bySec=new Map();
  rows.forEach(function(x){var show=x.r.name.toLowerCase().indexOf(q)>=0&&(!fo||x.r.status==="failed"||x.r.status==="errored")&&!off[category(x.r)];
    x.t.hidden=!show;n+=show;bySec.set(x.sec,(bySec.get(x.sec)||0)+show);});
  bySec.forEach(function(v,s){s.hidden=!v;});
  document.getElementById("shown").textContent=n+" of "+rows.length+" shown";
}
filter.addEventListener("input",apply);failedOnly.addEventListener("change",apply);apply();
document.addEventListener("keydown",function(e){
  if(e.key==="/"&&document.activeElement!==filter){e.preventDefault();filter.focus();return;}
  if(e.key==="Escape"&&document.activeElement===filter){filter.blur();return;}
  if(document.activeElement===filter)return;
  if(e.key==="j"||e.key==="k"||e.key==="ArrowDown"||e.key==="ArrowUp"){
    var vis=rows.filter(function(x){return !x.t.hidden;}).map(function(x){return x.t.firstChild;});if(!vis.length)return;
    var i=vis.indexOf(document.activeElement),down=e.key==="j"||e.key==="ArrowDown";
    e.preventDefault();vis[Math.max(0,Math.min(vis.length-1,i<0?0:i+(down?1:-1)))].focus();}
});
window.addEventListener("beforeprint",function(){rows.forEach(function(x){if(!x.t.hidden&&!x.t.querySelector(".detail"))open(x.t,x.r);});});
document.documentElement.dataset.ready="1";
})();
</script>
</body>
</html>
"##;
